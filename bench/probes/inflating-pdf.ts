/**
 * Writes the audit's PDF (issue 43, finding 3) for a memory probe: a valid one-page PDF, 1.8 MB on disk, whose
 * page content inflates to 1.8 GB (packages/core/test/ingest/inflating-pdf.ts). Generate it outside the
 * repository, then ingest the folder under a memory limit:
 *
 *   tsx bench/probes/inflating-pdf.ts /tmp/bomb/bomb.pdf 1800
 *   /usr/bin/time -v systemd-run --user --scope -p MemoryMax=2G pnpm ingest /tmp/bomb
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { inflatingPdf } from '../../packages/core/test/ingest/inflating-pdf.ts';

const [path, mib = '1800'] = process.argv.slice(2);
if (!path) throw new Error('usage: tsx bench/probes/inflating-pdf.ts <out.pdf> [inflated MiB, default 1800]');
const pdf = await inflatingPdf(Number(mib));
await mkdir(dirname(path), { recursive: true });
await writeFile(path, pdf);
console.log(`${path}: ${(pdf.length / 1e6).toFixed(2)} MB, inflating to ${mib} MiB`);

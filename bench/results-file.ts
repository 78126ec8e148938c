import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';

const resultsFile = new URL('./results.md', import.meta.url);
const HEADER = '# Benchmark results\n\nMeasured figures of the benchmarks in `bench/`; each section says how to reproduce it.\n';

/** Puts a benchmark's section (starting with its `## title`) into bench/results.md, replacing the old one. */
export async function writeResultsSection(title: string, section: string): Promise<void> {
  const current = existsSync(resultsFile) ? await readFile(resultsFile, 'utf8') : HEADER;
  const start = current.indexOf(title);
  if (start === -1) {
    await writeFile(resultsFile, `${current.trimEnd()}\n\n${section}`);
    return;
  }
  const next = current.indexOf('\n## ', start + title.length);
  await writeFile(resultsFile, `${current.slice(0, start)}${section}${next === -1 ? '' : current.slice(next)}`);
}

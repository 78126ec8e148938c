/**
 * `pnpm build`: one esbuild bundle per entry point under dist/, started with plain `node`.
 * Everything pure JavaScript is bundled (and tree-shaken), so the production images ship dist/ and no
 * node_modules at all. The embedded adapters' native packages stay external: they are imported only
 * when the configuration asks for them (see packages/core/src/adapters-from-config.ts) and resolve from
 * the workspace's node_modules when dist/ runs inside the repository. docs/architecture.md says why.
 */
import { cp, mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build, type BuildOptions } from 'esbuild';
import { VENDOR_FILES, vendorFilePath } from '../services/retrieval/src/routes/web.ts';

/** Packages with native binaries or their own runtime loading, never bundled. */
export const EXTERNAL_PACKAGES = ['@lancedb/lancedb', 'apache-arrow', '@huggingface/transformers', 'onnxruntime-node', 'sharp'];

interface EntryPoint {
  source: string;
  folder: string;
  name: string;
  /** Files the entry point starts at run time (a worker thread's code), bundled with it into its folder, sharing its chunks. */
  workers?: Record<string, string>;
}

/** Entry point → folder under dist/. Each bundle's chunks (lazily imported adapters) sit beside it. */
export const ENTRY_POINTS: EntryPoint[] = [
  { source: 'services/retrieval/src/server.ts', folder: 'retrieval', name: 'server' },
  // The job converts documents in worker threads (packages/core/src/pipeline/worker-preparation.ts), which load this file.
  { source: 'ingest/src/cli.ts', folder: 'ingest', name: 'cli', workers: { 'document-preparation-worker': 'packages/core/src/pipeline/document-preparation-worker.ts' } },
  // The qdrant-backup CronJob's entry point, shipped in the ingest image (k8s/rag/backup/).
  { source: 'ingest/src/backup-cli.ts', folder: 'backup', name: 'backup' },
  { source: 'services/retrieval/src/mcp/server.ts', folder: 'mcp', name: 'server' },
];

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));

/** CommonJS dependencies bundled into ESM still call require() for Node's built-ins. */
const requireShim = "import { createRequire as __ragCreateRequire } from 'node:module'; const require = __ragCreateRequire(import.meta.url);";

function bundleOptions(entry: EntryPoint, outRoot: string): BuildOptions {
  return {
    absWorkingDir: repositoryRoot,
    entryPoints: { [entry.name]: entry.source, ...entry.workers },
    outdir: `${outRoot}/${entry.folder}`,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    // The oldest Node line the code supports (these machines); the images run a newer LTS.
    target: 'node20.6',
    external: EXTERNAL_PACKAGES,
    banner: { js: requireShim },
    sourcemap: 'linked',
    legalComments: 'linked',
    chunkNames: '[name]-[hash]',
    logLevel: 'warning',
  };
}

/** Builds every entry under `outRoot` (relative to the repository root, or absolute). */
export async function buildAll(outRoot = 'dist'): Promise<void> {
  const out = resolve(repositoryRoot, outRoot);
  await rm(out, { recursive: true, force: true });
  await Promise.all(ENTRY_POINTS.map((entry) => build(bundleOptions(entry, out))));
  // The web page's files are read at startup from ../web/ beside the routes: dist/web/ for the bundle.
  await cp(`${repositoryRoot}services/retrieval/src/web`, `${out}/web`, { recursive: true });
  // The page's libraries (marked, DOMPurify), served from dist/web/vendor/ by routes/web.ts.
  const requireFromService = createRequire(`${repositoryRoot}services/retrieval/package.json`);
  await mkdir(`${out}/web/vendor`, { recursive: true });
  for (const [name, vendor] of Object.entries(VENDOR_FILES)) await cp(vendorFilePath(requireFromService, vendor), `${out}/web/vendor/${name}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' } } });
  await buildAll(values.outdir);
  process.stdout.write(`built ${ENTRY_POINTS.map((entry) => `${values.outdir}/${entry.folder}/${entry.name}.js`).join(', ')}\n`);
}

/**
 * What the embedded store's search view costs in memory once loaded, as a server loads it
 * (LanceDbSearchView.readSaved of `<data>/lancedb/docs-v2.search-view`): process.memoryUsage() before and
 * after, after a full collection each time, split into the V8 heap and the array buffers (the file's
 * bytes, which the view uses in place), and the load time.
 *
 *   node --expose-gc --import tsx bench/search-view-memory.ts <RAG_DATA_DIR>
 */
import { join } from 'node:path';
import { LanceDbSearchView } from '../packages/core/src/stores/lancedb-search-view.ts';
import { readSectionsMeta } from '../packages/core/src/stores/sections-file.ts';

interface SavedViewMeta {
  tableId?: string;
  tableVersion: number;
  chunks: number;
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function memory(label: string): void {
  (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed, heapTotal, arrayBuffers, external } = process.memoryUsage();
  console.log(`${label}: rss ${mib(rss)}, heap used ${mib(heapUsed)} of ${mib(heapTotal)}, array buffers ${mib(arrayBuffers)}, external ${mib(external)}`);
}

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: node --expose-gc --import tsx bench/search-view-memory.ts <RAG_DATA_DIR>');
if (!(globalThis as { gc?: unknown }).gc) console.log('(run with --expose-gc for figures after a full collection)');
const path = join(dataDir, 'lancedb/docs-v2.search-view');
const meta = await readSectionsMeta<SavedViewMeta>(path);
if (!meta) throw new Error(`no saved search view at ${path}`);
memory('before');
const started = performance.now();
const view = await LanceDbSearchView.readSaved(path, { tableId: meta.tableId, version: meta.tableVersion });
if (!view) throw new Error(`the view at ${path} is of another format`);
console.log(`${meta.chunks} chunks loaded in ${(performance.now() - started).toFixed(0)} ms`);
memory('view loaded');

// A document-preparation worker for the tests of the pool around it: a document named slow… never ends,
// one named huge… takes memory until the worker's heap limit, one named holds-N… keeps N MiB of heap
// (arrays of small integers, 8 bytes an element) while it is prepared, one named buffers-N… takes N MiB of
// ArrayBuffers outside the heap, a MiB a millisecond (as pdf.js inflates a stream), under the worker's own
// buffer watch (buffer-watch.ts, the task's buffersMb), one named limits… answers with the worker's own
// resourceLimits (https://nodejs.org/api/worker_threads.html#workerresourcelimits), any other is prepared at once.
import { resourceLimits } from 'node:worker_threads';
import { register } from 'tsx/esm/api';
import workerpool from 'workerpool';

register();
const { stopPastBuffers } = await import('../../../src/pipeline/buffer-watch.ts');

const MIB_OF_SMALL_INTEGERS = (1024 * 1024) / 8;

async function prepare(task) {
  const stopWatching = task.buffersMb === undefined ? undefined : stopPastBuffers(task.buffersMb);
  try {
    return await prepareHere(task);
  } finally {
    stopWatching?.();
  }
}

async function prepareHere(task) {
  if (task.uri.startsWith('slow')) for (;;);
  if (task.uri.startsWith('huge')) {
    const held = [];
    for (;;) held.push(new Array(1_000_000).fill(held.length));
  }
  const holds = /^holds-(\d+)/.exec(task.uri);
  if (holds) {
    const held = Array.from({ length: Number(holds[1]) }, (_, index) => new Array(MIB_OF_SMALL_INTEGERS).fill(index));
    return { prepared: { markdown: `${task.uri} ${held.length}`, chunks: [] } };
  }
  const buffers = /^buffers-(\d+)/.exec(task.uri);
  if (buffers) {
    const held = [];
    while (held.length < Number(buffers[1])) {
      held.push(new ArrayBuffer(1024 * 1024));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    return { prepared: { markdown: `${task.uri} ${held.length}`, chunks: [] } };
  }
  if (task.uri.startsWith('limits')) return { prepared: { markdown: JSON.stringify(resourceLimits), chunks: [] } };
  return { prepared: { markdown: task.uri, chunks: [] } };
}

workerpool.worker({ prepare, ready: () => true });

// A document-preparation worker for the tests of the pool around it: a document named slow… never ends,
// one named huge… takes memory until the worker's heap limit, one named holds-N… keeps N MiB of heap
// (arrays of small integers, 8 bytes an element) while it is prepared, one named limits… answers with the
// worker's own resourceLimits (https://nodejs.org/api/worker_threads.html#workerresourcelimits), any other
// is prepared at once.
import { resourceLimits } from 'node:worker_threads';
import workerpool from 'workerpool';

const MIB_OF_SMALL_INTEGERS = (1024 * 1024) / 8;

function prepare(task) {
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
  if (task.uri.startsWith('limits')) return { prepared: { markdown: JSON.stringify(resourceLimits), chunks: [] } };
  return { prepared: { markdown: task.uri, chunks: [] } };
}

workerpool.worker({ prepare, ready: () => true });

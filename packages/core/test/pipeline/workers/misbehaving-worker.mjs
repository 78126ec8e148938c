// A document-preparation worker for the tests of the pool around it: a document named slow… never ends,
// one named huge… takes memory until the worker's heap limit, any other is prepared at once.
import workerpool from 'workerpool';

function prepare(task) {
  if (task.uri.startsWith('slow')) for (;;);
  if (task.uri.startsWith('huge')) {
    const held = [];
    for (;;) held.push(new Array(1_000_000).fill(held.length));
  }
  return { prepared: { markdown: task.uri, chunks: [] } };
}

workerpool.worker({ prepare, ready: () => true });

// Development entry of the document-preparation worker: registers tsx in the worker thread, which Node 20
// does not do from the parent's --import, then loads the TypeScript worker. The build bundles the worker itself.
import { register } from 'tsx/esm/api';

register();
await import('./document-preparation-worker.ts');

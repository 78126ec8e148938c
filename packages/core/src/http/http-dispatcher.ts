import { Agent } from 'undici';

/**
 * The connection pool of every call this suite makes with fetch (TEI, the gateway, docling-serve, Qdrant's
 * aliases and snapshots): undici 7 from npm, not the one inside whichever Node runs. Node 26.6's own undici
 * (8.9) stalls a request on a kept-alive connection after the event loop was idle, for as long again as it
 * was idle (a call 1 s after the previous one took 1.5 s here: nodejs/undici#5600, fixed in 8.10, which
 * needs Node 22); undici 7 does not, and serves Node 20's fetch and Node 26's alike (as the Qdrant client's
 * own undici 7 does, pnpm-workspace.yaml).
 */
// Typed as what fetch takes: npm undici's types and Node's bundled ones (undici-types) describe the same interface apart.
export const httpDispatcher = new Agent() as unknown as NonNullable<RequestInit['dispatcher']>;

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { context, propagation } from '@opentelemetry/api';

/**
 * Puts the active span's W3C `traceparent` on every request made with fetch (undici): our remote calls
 * (TEI, the gateway, docling-serve) and the Qdrant client alike. The Qdrant client takes only fixed
 * headers at construction and builds its own fetch, so per-request injection has to happen below it:
 * undici publishes each request on the `undici:request:create` diagnostics channel, synchronously in
 * the caller's async context, with `addHeader` to add one
 * (https://undici.nodejs.org/#/docs/api/DiagnosticsChannel; the same hook as
 * @opentelemetry/instrumentation-undici). Node's fetch and the npm undici publish on the same channel.
 * GCS (@google-cloud/storage) calls through gaxios on node:http and is not covered.
 */
const CHANNEL = 'undici:request:create';

interface UndiciRequest {
  addHeader(name: string, value: string): unknown;
}

function injectTraceContext(message: unknown): void {
  const { request } = message as { request: UndiciRequest };
  propagation.inject(context.active(), request, { set: (carrier, name, value) => carrier.addHeader(name, value) });
}

/** Subscribes; the returned function unsubscribes. */
export function propagateOnFetch(): () => void {
  subscribe(CHANNEL, injectTraceContext);
  return () => unsubscribe(CHANNEL, injectTraceContext);
}

import { ROOT_CONTEXT, trace, type Context, type Link, type TextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { IncomingTraceTrust } from './incoming-trace-trust.ts';

/**
 * The trace context a request at the edge runs under. W3C Trace Context
 * (https://www.w3.org/TR/trace-context/#mutating-the-traceparent-field) names "restart trace" as the
 * mutation of "a front gate into secure networks", with the caller's tracestate cleaned up: so a caller
 * that is not trusted (TRACE_TRUST_INCOMING) gets a new trace id and our own sampling decision, and its
 * traceparent is kept only as a span link, ids and flags, for whoever wants to join the two traces.
 * Baggage is never read here (nor propagated at all: start-tracing.ts registers no baggage propagator).
 */
export interface IncomingTrace {
  parent: Context;
  links: Link[];
}

/** A version-00 traceparent is 55 characters; later versions may append fields, within this. */
export const MAX_TRACEPARENT_LENGTH = 512;
/** The spec's limits on tracestate: 32 list-members, 512 characters propagated. */
export const MAX_TRACESTATE_MEMBERS = 32;
export const MAX_TRACESTATE_LENGTH = 512;
/** Entries longer than this are the first dropped when tracestate must be truncated (the spec's rule). */
const LONG_TRACESTATE_ENTRY = 128;

const traceContext = new W3CTraceContextPropagator();

type Headers = Record<string, string | string[] | undefined>;

export function incomingTrace(headers: Headers, peerAddress: string | undefined, trust: IncomingTraceTrust): IncomingTrace {
  const sent = trace.getSpanContext(traceContext.extract(ROOT_CONTEXT, headers, boundedHeaders));
  if (!sent) return { parent: ROOT_CONTEXT, links: [] };
  if (trust.trusts(peerAddress)) return { parent: trace.setSpanContext(ROOT_CONTEXT, sent), links: [] };
  return { parent: ROOT_CONTEXT, links: [{ context: { traceId: sent.traceId, spanId: sent.spanId, traceFlags: sent.traceFlags, isRemote: true } }] };
}

/** Reads traceparent and tracestate only, each within the spec's sizes. */
const boundedHeaders: TextMapGetter<Headers> = {
  keys: () => ['traceparent', 'tracestate'],
  get(headers, name) {
    const value = [headers[name] ?? []].flat().join(',');
    if (name === 'traceparent') return value.length <= MAX_TRACEPARENT_LENGTH ? value : undefined;
    if (name === 'tracestate') return boundedTraceState(value);
    return undefined;
  },
};

/**
 * At most 32 list-members and 512 characters, truncated by whole entries as the spec asks
 * (https://www.w3.org/TR/trace-context/#tracestate-limits): entries over 128 characters go first, then
 * entries from the end. Empty members are dropped.
 */
export function boundedTraceState(header: string): string {
  // Long lists are cut before being split further, so a megabyte header costs one pass.
  const members = header.split(',', MAX_TRACESTATE_MEMBERS * 4).map((member) => member.trim()).filter(Boolean).slice(0, MAX_TRACESTATE_MEMBERS);
  const lengthOf = () => members.join(',').length;
  while (lengthOf() > MAX_TRACESTATE_LENGTH) {
    const long = members.findIndex((member) => member.length > LONG_TRACESTATE_ENTRY);
    members.splice(long >= 0 ? long : members.length - 1, 1);
  }
  return members.join(',');
}

/**
 * A real OTLP/HTTP trace receiver on port 0 that decodes the JSON encoding
 * (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding: POST /v1/traces, an
 * ExportTraceServiceRequest with resourceSpans[].scopeSpans[].spans[], trace and span ids as hex
 * strings, attributes as [{key, value: {stringValue | intValue | boolValue | doubleValue}}]).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** SPAN_KIND_INTERNAL 1, SERVER 2, CLIENT 3. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** STATUS_CODE_UNSET 0, OK 1, ERROR 2. */
  statusCode: number;
  serviceName: string | undefined;
  /** Nanoseconds since the epoch (as a double: enough to order spans). */
  start: number;
  /** The span's links (OTLP Span.links: traceId, spanId as hex). */
  links: Array<{ traceId: string; spanId: string }>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  status?: { code?: number };
  startTimeUnixNano: string | number | { low: number; high: number };
  links?: Array<{ traceId: string; spanId: string }>;
}
interface ExportRequest {
  resourceSpans?: Array<{ resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the exports received. */
  contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== 'POST' || request.url !== '/v1/traces') return void response.writeHead(404).end();
    contentTypes.push(request.headers['content-type'] ?? '');
    spans.push(...decode(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest));
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function decode(body: ExportRequest): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const serviceName = attributesOf(resourceSpans.resource?.attributes)['service.name'];
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        statusCode: span.status?.code ?? 0,
        serviceName: typeof serviceName === 'string' ? serviceName : undefined,
        start: nanos(span.startTimeUnixNano),
        links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
      })),
    );
  });
}

function nanos(time: OtlpSpan['startTimeUnixNano']): number {
  return typeof time === 'object' ? time.high * 2 ** 32 + (time.low >>> 0) : Number(time);
}

function attributesOf(attributes: OtlpAttribute[] | undefined): Record<string, string | number | boolean> {
  const result: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    if (value.stringValue !== undefined) result[key] = value.stringValue;
    else if (value.intValue !== undefined) result[key] = Number(value.intValue);
    else if (value.boolValue !== undefined) result[key] = value.boolValue;
    else if (value.doubleValue !== undefined) result[key] = value.doubleValue;
  }
  return result;
}

/** The spans of one trace as an indented text tree, children in start order as received. */
export function traceTree(spans: ReceivedSpan[], traceId: string): string {
  const ofTrace = spans.filter((span) => span.traceId === traceId).sort((a, b) => a.start - b.start);
  const ids = new Set(ofTrace.map((span) => span.spanId));
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of ofTrace.filter((s) => (parent === undefined ? !s.parentSpanId || !ids.has(s.parentSpanId) : s.parentSpanId === parent))) {
      const attributes = Object.entries(span.attributes).map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(' ');
      lines.push(`${'  '.repeat(depth)}${span.name}${span.statusCode === 2 ? ' [ERROR]' : ''}  ${attributes}`);
      walk(span.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}

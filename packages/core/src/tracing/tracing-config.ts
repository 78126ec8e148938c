import { z } from 'zod';
import { parseIncomingTraceTrust } from './incoming-trace-trust.ts';

/**
 * The OpenTelemetry SDK's standard variables this service honours, validated with the rest of the
 * configuration (config.ts spreads this shape into its schema) and passed to the SDK explicitly:
 * https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/ and
 * https://opentelemetry.io/docs/specs/otel/protocol/exporter/. No endpoint: tracing is off.
 */
const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();
const optionalHttpUrl = optionalText.pipe(
  z
    .string()
    .url('expected an http(s) URL such as http://otel-collector:4318')
    .refine((value) => /^https?:\/\//.test(value), 'expected an http(s) URL such as http://otel-collector:4318')
    .optional(),
);
const flag = z.enum(['true', 'false']).default('false').transform((value) => value === 'true');

/** The samplers of the spec's OTEL_TRACES_SAMPLER that need no extra package. */
export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/** grpc needs another exporter package; the collector takes OTLP over HTTP on 4318 just as well. */
const OTLP_HTTP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpHttpProtocol = (typeof OTLP_HTTP_PROTOCOLS)[number];
const protocol = z.enum(OTLP_HTTP_PROTOCOLS, { message: 'expected http/protobuf or http/json (grpc is not supported: use port 4318)' }).optional();

export const tracingConfigShape = {
  OTEL_SDK_DISABLED: flag,
  /** `none` turns tracing off whatever the endpoint; only `otlp` exports. */
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none']).default('otlp'),
  /** Base URL of an OTLP/HTTP receiver; traces go to `<endpoint>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalHttpUrl,
  /** The full traces URL, used as is; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalHttpUrl,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
  OTEL_TRACES_SAMPLER: z.enum(TRACE_SAMPLERS).default('parentbased_always_on'),
  /** The ratio of the *traceidratio samplers, 0 to 1 (spec default 1). */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0, 'expected a ratio from 0 to 1').max(1, 'expected a ratio from 0 to 1').optional(),
  OTEL_SERVICE_NAME: optionalText,
  /** `key=value,key2=value2`, values percent-encoded (W3C Baggage octets). */
  OTEL_RESOURCE_ATTRIBUTES: optionalText,
  /** Sensitive: records the user's query text on the retrieval span. Off by default. */
  OTEL_RAG_RECORD_QUERY: flag,
  /**
   * Whose trace context (traceparent, tracestate) the API continues: `none` (default: every request starts
   * a new trace, the caller's traceparent kept as a span link), `all`, or the addresses / CIDR ranges of
   * the proxies in front. Baggage is never propagated.
   */
  TRACE_TRUST_INCOMING: z
    .string()
    .default('none')
    .superRefine((value, check) => {
      try {
        parseIncomingTraceTrust(value);
      } catch (error) {
        check.addIssue({ code: z.ZodIssueCode.custom, message: (error as Error).message });
      }
    }),
};

const tracingConfigSchema = z.object(tracingConfigShape);
export type TracingConfig = z.infer<typeof tracingConfigSchema>;

/** Where spans are sent, or undefined when tracing is off. */
export function tracesEndpoint(config: TracingConfig): string | undefined {
  if (config.OTEL_SDK_DISABLED || config.OTEL_TRACES_EXPORTER === 'none') return undefined;
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) return `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

/** The spec's default protocol is http/protobuf. */
export function tracesProtocol(config: TracingConfig): OtlpHttpProtocol {
  return config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
}

/** OTEL_RESOURCE_ATTRIBUTES as attributes; a malformed pair is skipped, as the spec asks. */
export function parseResourceAttributes(text: string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const separator = pair.indexOf('=');
    if (separator <= 0) continue;
    try {
      attributes[decodeURIComponent(pair.slice(0, separator).trim())] = decodeURIComponent(pair.slice(separator + 1).trim());
    } catch {
      // not valid percent-encoding: skipped
    }
  }
  return attributes;
}

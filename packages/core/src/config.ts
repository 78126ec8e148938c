import { z } from 'zod';
import { LINK_PAGES_POLICIES, type LinkPagesPolicy } from './converters/html/link-list-pages.ts';
import { RagError } from './errors.ts';
import { EQUAL_WEIGHTS, parseFusionWeights, QDRANT_RRF_K, type RrfParameters } from './fusion/rrf.ts';
import { BM25_LANGUAGES, DEFAULT_BM25_LANGUAGE } from './sparse/languages/bm25-languages.ts';
import { tracingConfigShape } from './tracing/tracing-config.ts';

/**
 * The single place an environment variable is read. Names follow the seed's Kubernetes
 * deployment (QDRANT_URL, EMBED_URL, GATEWAY_MODEL, …) so its manifests stay valid.
 */
const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();
const httpUrl = z
  .string()
  .url('expected an http(s) URL such as http://host:8080')
  .refine((value) => /^https?:\/\//.test(value), 'expected an http(s) URL such as http://host:8080');
const optionalUrl = optionalText.pipe(httpUrl.optional());
const integer = (min: number, max: number) => z.coerce.number().int(`expected an integer`).min(min).max(max);

export const configSchema = z
  .object({
    PORT: integer(0, 65535).default(8090),
    HOST: z.string().default('127.0.0.1'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** auto: human-readable on a terminal, JSON lines in containers and pipes. */
    LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
    /** A little under Kubernetes' default 30 s termination grace period, so draining ends before SIGKILL. */
    SHUTDOWN_TIMEOUT_MS: integer(0, 3_600_000).default(25_000),
    RAG_DATA_DIR: z.string().min(1).default('.rag'),
    /** Rows from which the embedded store's compaction builds an IVF-PQ index for dense search (stores/lancedb-ann-index.ts). */
    EMBEDDED_ANN_MIN_ROWS: integer(1, 1_000_000_000).default(50_000),
    RAG_COLLECTION: optionalText,
    QDRANT_URL: optionalUrl,
    QDRANT_API_KEY: optionalText,
    QDRANT_COLLECTION: optionalText,
    STORE_TIMEOUT_MS: integer(1, 600_000).default(10_000),
    /**
     * How a collection this process creates is spread over a Qdrant cluster (the gke-distributed overlay):
     * shards, copies of each shard, and copies that must apply a write before it is acknowledged. Unset:
     * Qdrant's defaults (one shard, one copy). An existing collection keeps what it was created with.
     */
    QDRANT_SHARD_NUMBER: integer(1, 1000).optional(),
    QDRANT_REPLICATION_FACTOR: integer(1, 100).optional(),
    QDRANT_WRITE_CONSISTENCY_FACTOR: integer(1, 100).optional(),
    /**
     * How a collection this process creates holds its dense vectors, for collections past the RAM of a node
     * (README "Sizing"): `int8` keeps a scalar-quantized copy in RAM (1 byte a dimension) and the float32
     * originals on disk for rescoring; QDRANT_VECTORS_ON_DISK serves the originals from disk (memory-mapped)
     * with or without it, and is on by default with int8. An existing collection keeps what it was created with.
     */
    QDRANT_QUANTIZATION: z.enum(['none', 'int8']).default('none'),
    QDRANT_VECTORS_ON_DISK: z.enum(['true', 'false']).optional(),
    EMBED_URL: optionalUrl,
    EMBED_API_KEY: optionalText,
    EMBED_MODEL: optionalText,
    EMBED_BATCH_SIZE: integer(1, 4096).default(32),
    EMBED_QUERY_PREFIX: z.string().default(''),
    EMBED_PASSAGE_PREFIX: z.string().default(''),
    EMBED_TIMEOUT_MS: integer(1, 600_000).default(30_000),
    RERANK_URL: optionalUrl,
    RERANK_MODEL: optionalText,
    RERANK_API_KEY: optionalText,
    RERANK_CANDIDATES: integer(1, 1000).default(50),
    RERANK_TIMEOUT_MS: integer(1, 600_000).default(120_000),
    /** With the reranker down or timing out: `fused` answers from the fused ranking, `fail` answers 503. */
    RERANK_FALLBACK: z.enum(['fused', 'fail']).default('fused'),
    /** RRF's constant (Qdrant's default 2; another one needs Qdrant ≥ 1.16). */
    RRF_K: integer(1, 1000).default(QDRANT_RRF_K),
    /** `dense:<w>,sparse:<w>`: how much each leg counts in RRF (weights other than 1 need Qdrant ≥ 1.17); see eval/reports/ladder.md. */
    FUSION_WEIGHTS: z
      .string()
      .optional()
      .transform((text, context) => {
        if (text === undefined || text.trim() === '') return EQUAL_WEIGHTS;
        const parsed = parseFusionWeights(text);
        if (typeof parsed === 'string') context.addIssue({ code: z.ZodIssueCode.custom, message: parsed });
        return typeof parsed === 'string' ? EQUAL_WEIGHTS : parsed;
      }),
    GATEWAY_URL: optionalUrl,
    GATEWAY_API_KEY: optionalText,
    GATEWAY_MODEL: z.string().min(1).default('qwen3-4b-cpu'),
    GATEWAY_TIMEOUT_MS: integer(1, 3_600_000).default(300_000),
    /** How long condensing a follow-up may take before the LLM-free query is used (a CPU-tier model needs tens of seconds). */
    CONDENSE_TIMEOUT_MS: integer(1, 600_000).default(8_000),
    /** A follow-up the gateway condensed: searched as condensed, fused with its LLM-free expansion (fused) or alone (condensed). */
    FOLLOW_UP_SEARCH: z.enum(['fused', 'condensed']).default('fused'),
    /** Answers as JSON sentences with their passages' labels: auto when a start-up canary proves the gateway honours a JSON schema. */
    GATEWAY_STRUCTURED: z.enum(['auto', 'json_schema', 'off']).default('auto'),
    /** A generated sentence no passage supports: shown with a mark (mark) or left out with a notice (drop). */
    UNSUPPORTED_CLAIMS: z.enum(['mark', 'drop']).default('mark'),
    /** A retrieved passage written to the answering model (an order to drop its rules, a forged fence…): withheld from the answer, or off. */
    SUSPECT_PASSAGES: z.enum(['withhold', 'off']).default('withhold'),
    TOP_K: integer(1, 50).default(5),
    /** The characters of each passage the prompt carries, around the sentence that covers the question best; 0: whole passages. */
    PROMPT_PASSAGE_CHARS: integer(0, 100_000).default(0),
    RAG_MIN_SCORE: z.coerce.number().min(0).optional(),
    CHUNK_SIZE: integer(100, 100_000).default(1200),
    CHUNK_OVERLAP: integer(0, 100_000).default(200),
    CHUNK_MIN_CHARS: integer(0, 100_000).default(400),
    GCS_BUCKET: optionalText,
    GCS_PREFIX: z.string().default(''),
    /** The folder that was ingested: GET /documents/<source> serves its files (GCS_BUCKET: signed URLs instead). */
    RAG_DOCUMENTS_DIR: optionalText,
    DOCLING_URL: optionalUrl,
    DOCLING_API_KEY: optionalText,
    DOCLING_TIMEOUT_MS: integer(1, 3_600_000).default(600_000),
    INGEST_CONCURRENCY: integer(1, 64).default(4),
    /** Worker threads that convert and chunk documents (default: INGEST_CONCURRENCY, at most one a core); 0 converts on the job's own thread. */
    INGEST_CONVERT_WORKERS: integer(0, 64).optional(),
    /** One document's conversion and chunking past this many milliseconds is stopped: it fails alone with RAG_CONVERSION_TIMEOUT. */
    INGEST_CONVERT_TIMEOUT_MS: integer(1_000, 3_600_000).default(120_000),
    /** A conversion worker's heap, in MiB: a document that needs more fails alone with RAG_DOCUMENT_TOO_COMPLEX. */
    INGEST_CONVERT_MEMORY_MB: integer(64, 65_536).default(1024),
    /**
     * What a conversion worker may hold outside its heap, in MiB (ArrayBuffers: pdf.js's decoded streams, the
     * document's bytes): a document that needs more fails alone with RAG_DOCUMENT_TOO_COMPLEX.
     */
    INGEST_CONVERT_BUFFERS_MB: integer(16, 65_536).default(256),
    /**
     * HTML pages larger than this many bytes fail with RAG_DOCUMENT_TOO_COMPLEX before they are parsed; default: a
     * 32nd of INGEST_CONVERT_MEMORY_MB (33.5 MB for 1,024 MiB), what a page's tree can take of a worker's heap.
     */
    INGEST_MAX_HTML_BYTES: integer(1, Number.MAX_SAFE_INTEGER).optional(),
    /**
     * MiB kept for the ingest job's own thread when checking its bound against the container's memory limit (cgroup
     * memory.max): workers × (INGEST_CONVERT_MEMORY_MB + INGEST_CONVERT_BUFFERS_MB + 128) + this must fit, or the job refuses to start.
     */
    INGEST_MAIN_MEMORY_MB: integer(64, 65_536).default(512),
    /** What a page of links (a table of contents, an index) is indexed with: light, its headings and own text; full, its links too. */
    INGEST_LINK_PAGES: z.enum(LINK_PAGES_POLICIES as [LinkPagesPolicy, ...LinkPagesPolicy[]]).default('light'),
    /** Workers the listing is split across (rag-ingest --shards): each syncs the share of JOB_COMPLETION_INDEX and none prunes. */
    INGEST_SHARDS: integer(1, 10_000).optional(),
    /** Set by Kubernetes in each pod of an Indexed Job (https://kubernetes.io/docs/tasks/job/indexed-parallel-processing-static/). */
    JOB_COMPLETION_INDEX: integer(0, 9_999).optional(),
    /** YAML file of API keys (SHA-256 hashes, groups, rate limits); unset: the API is open and callers see public documents only. */
    RAG_AUTH_FILE: optionalText,
    /** Without RAG_AUTH_FILE: requests (MCP messages) a minute each client address may send to the data routes; 0: no limit. */
    RAG_RATE_LIMIT_PER_ADDRESS: integer(0, 1_000_000).default(600),
    /** A sync refuses to prune more than this share of the indexed documents (an emptied or mistyped source); --force-prune overrides. */
    INGEST_MAX_PRUNE_RATIO: z.coerce.number().min(0, 'expected a number from 0 to 1').max(1, 'expected a number from 0 to 1').default(0.5),
    /** Documents larger than this many bytes (50 MB, decimal) fail with RAG_DOCUMENT_TOO_LARGE instead of being read. */
    INGEST_MAX_FILE_BYTES: integer(1, Number.MAX_SAFE_INTEGER).default(50_000_000),
    /**
     * Contextual retrieval (docs/retrieval.md): a short context situating each chunk in its document is stored with it and
     * prepended to what is embedded and BM25-encoded. off; lead: the document's title and first sentence; llm: written by the gateway.
     */
    CONTEXT_MODE: z.enum(['off', 'lead', 'llm']).default('off'),
    /**
     * The language of the BM25 sparse leg (docs/retrieval.md, "Languages"): one of fastembed's Snowball languages
     * (identical vectors), or cjk for Chinese/Japanese/Korean. Recorded with the collection, like the model.
     */
    BM25_LANGUAGE: z.enum(BM25_LANGUAGES).default(DEFAULT_BM25_LANGUAGE),
    /** llm mode: the gateway model that writes contexts (default GATEWAY_MODEL). */
    CONTEXT_MODEL: optionalText,
    /** llm mode: chunks whose context is being written at once, across documents. */
    CONTEXT_CONCURRENCY: integer(1, 64).default(4),
    /** llm mode: gateway tokens (prompt + completion) one ingest run may spend; past it, chunks wait for the next run. */
    CONTEXT_MAX_TOKENS: integer(1, Number.MAX_SAFE_INTEGER).default(2_000_000),
    /** llm mode: a longer document is sent as a window of this many characters around the chunk. */
    CONTEXT_MAX_DOCUMENT_CHARS: integer(1_000, 10_000_000).default(24_000),
    /** OTEL_* (docs/observability.md, "Tracing"): the SDK's standard variables; tracing is off without an endpoint. */
    ...tracingConfigShape,
  })
  .refine((config) => config.CHUNK_OVERLAP < config.CHUNK_SIZE, {
    message: 'CHUNK_OVERLAP must be smaller than CHUNK_SIZE',
    path: ['CHUNK_OVERLAP'],
  });

export type RawConfig = z.infer<typeof configSchema>;

export interface Config extends RawConfig {
  /** The collection name, whichever store is used (QDRANT_COLLECTION wins, then RAG_COLLECTION). */
  collection: string;
}

export const DEFAULT_COLLECTION = 'docs-v2';

/** How hybrid searches fuse their legs, from RRF_K and FUSION_WEIGHTS. */
export function fusionOf(config: Pick<Config, 'RRF_K' | 'FUSION_WEIGHTS'>): RrfParameters {
  return { k: config.RRF_K, weights: config.FUSION_WEIGHTS };
}

/**
 * Parses the environment; a bad value throws RAG_CONFIG_INVALID naming the variable and the expected form.
 * `defaults` are a command's own defaults for variables the environment leaves unset (the eval logs at warn).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, defaults: NodeJS.ProcessEnv = {}): Config {
  const parsed = configSchema.safeParse({ ...withoutEmptyValues(defaults), ...withoutEmptyValues(env) });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new RagError('RAG_CONFIG_INVALID', problems.join('; '));
  }
  const raw = parsed.data;
  return { ...raw, collection: raw.QDRANT_COLLECTION ?? raw.RAG_COLLECTION ?? DEFAULT_COLLECTION };
}

/**
 * An empty or blank value counts as unset, for every variable: a manifest's `PORT=` must not become
 * `z.coerce.number('')`, which is 0 (a random port), nor `RAG_MIN_SCORE=` a minimum of 0. Other values are
 * kept as they are, so a prefix such as `query: ` keeps its trailing space.
 */
function withoutEmptyValues(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
}

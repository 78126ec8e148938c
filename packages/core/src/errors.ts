/**
 * The one registry of error codes. Each code has one meaning, one HTTP status and a
 * message that tells the user what to do. docs/errors.md lists them for operators.
 */
export const errorCatalog = {
  RAG_INVALID_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  RAG_EMPTY_BODY: { status: 400, message: 'The request body is empty: send a JSON object such as {"query": "..."}.' },
  RAG_UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Send the request body as application/json.' },
  RAG_INVALID_QUERY: { status: 400, message: '"query" must be a non-empty string of at most 2000 characters.' },
  RAG_INVALID_K: { status: 400, message: '"k" must be an integer between 1 and 50.' },
  RAG_INVALID_FILTER: {
    status: 400,
    message:
      '"filter" does not have the expected shape: {"source": "<glob>", "type": ["md", ...], "modified_after": "<RFC 3339>", "modified_before": "<RFC 3339>", "meta": {"<key>": "<value>" | ["<value>", ...]}}, every field optional; the message names the field at fault.',
  },
  RAG_INVALID_MAX_PER_SOURCE: { status: 400, message: '"max_per_source" must be an integer between 1 and 50.' },
  RAG_INVALID_FRESHNESS: {
    status: 400,
    message: '"freshness" does not have the expected shape: {"half_life_days": <number above 0, at most 3650; default 30>, "weight": <number above 0, at most 1; default 0.1>}; the message names the field at fault.',
  },
  RAG_METADATA_FILE_INVALID: {
    status: 500,
    message: 'The folder\'s .rag-metadata.yaml cannot be read: fix it (rules: [{path: "<glob>", fields: {<key>: <value>}}]) and run the ingest again; nothing was indexed with wrong metadata.',
  },
  RAG_INVALID_REQUEST: { status: 400, message: 'The request does not match the expected shape.' },
  RAG_NOT_FOUND: {
    status: 404,
    message:
      'No such route. Routes: GET / (web page), POST /search, POST /chat, POST /v1/chat/completions, GET /v1/models, POST /mcp, GET /openapi.json, GET /healthz, GET /readyz, GET /metrics.',
  },
  RAG_PASSAGE_NOT_FOUND: { status: 404, message: 'No such passage: check the source and chunk index (list_sources gives the indexed sources and their chunk counts).' },
  RAG_DOCUMENT_NOT_FOUND: {
    status: 404,
    message: 'No such document: check the source, as a citation names it (URL-encoded after /documents/); a document outside your key\'s groups reads as missing.',
  },
  RAG_DOCUMENT_NAME_TOO_LONG: {
    status: 414,
    message: 'The document name is longer than any source the API serves (4,096 characters once URL-decoded): check the link.',
  },
  RAG_DOCUMENT_CHANGED: {
    status: 409,
    message:
      'The document changed on disk: it is not the version that was indexed (its size or modification time differs), or it changed while being sent. Ask again once it is no longer being written, and run the ingest so that its citations match it.',
  },
  RAG_DOCUMENTS_NOT_SERVED: {
    status: 404,
    message: 'This server does not serve the original documents: set RAG_DOCUMENTS_DIR to the folder that was ingested, or GCS_BUCKET for a bucket (signed URLs).',
  },
  RAG_UNKNOWN_MODEL: { status: 404, message: 'Unknown model: this API serves one model, "rag" (GET /v1/models).' },
  RAG_NO_QUESTION: { status: 400, message: '"messages" must hold at least one user message with text: the last one is the question.' },
  RAG_INVALID_CONVERSATION: {
    status: 400,
    message:
      'The earlier turns do not have the expected shape: send "history": [{"question": "...", "answer": "..."}] or "messages": [{"role": "user"|"assistant"|"system", "content": "..."}], oldest first.',
  },
  RAG_CONVERSATION_TOO_LONG: {
    status: 400,
    message: 'The conversation is too long: send at most 20 earlier turns (a history entry counts two) and 16000 characters of them in all; drop the oldest turns.',
  },
  RAG_PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  RAG_METHOD_NOT_ALLOWED: { status: 405, message: 'This route does not take this method: the Allow header lists the methods it takes.' },
  RAG_BAD_URL: { status: 400, message: 'The URL is not valid: check its percent-encoding (a % must be followed by two hexadecimal digits).' },
  RAG_MALFORMED_REQUEST: { status: 400, message: 'The request is not valid HTTP (request line, headers or Content-Length); the connection was closed.' },
  RAG_HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large; the connection was closed.' },
  RAG_REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time; the connection was closed.' },
  RAG_UNAUTHENTICATED: {
    status: 401,
    message: 'This route needs an API key: send `Authorization: Bearer <key>`. Ask the operator for a key; the server holds only its SHA-256 (RAG_AUTH_FILE).',
  },
  RAG_RATE_LIMITED: { status: 429, message: 'Too many requests with this API key: wait the seconds given by Retry-After, then retry.' },
  RAG_ADDRESS_RATE_LIMITED: {
    status: 429,
    message: 'Too many requests from this address to an API without keys (RAG_RATE_LIMIT_PER_ADDRESS): wait the seconds given by Retry-After, then retry.',
  },
  RAG_AUTH_THROTTLED: {
    status: 429,
    message: 'Too many requests with a wrong API key from this address: wait the seconds given by Retry-After, then retry with a valid key. Requests with a valid key are not held back.',
  },
  RAG_CONFIG_INVALID: { status: 500, message: 'The configuration is invalid.' },
  RAG_ADAPTER_NOT_INSTALLED: {
    status: 500,
    message:
      'The configuration asks for an embedded adapter whose packages are not installed. The production images carry the Qdrant, TEI and gateway adapters only: set QDRANT_URL, EMBED_URL and RERANK_URL, or run from a full `pnpm install`.',
  },
  RAG_MODEL_MISMATCH: {
    status: 409,
    message:
      'The collection was built with another embedding model. Re-index into a new collection (set QDRANT_COLLECTION or RAG_COLLECTION, e.g. docs-v3) or configure the model the collection records.',
  },
  RAG_CONTEXT_MISMATCH: {
    status: 409,
    message:
      'The collection was indexed with another CONTEXT_MODE, or another version of its lead rule or prompt: its chunks would mix two kinds of context. Re-index into a new collection (set QDRANT_COLLECTION or RAG_COLLECTION, e.g. docs-v3) or set the CONTEXT_MODE the collection records.',
  },
  RAG_LANGUAGE_MISMATCH: {
    status: 409,
    message:
      "The collection was indexed with another BM25_LANGUAGE: its sparse vectors hold that language's stems, which this process's terms would never meet. Set the BM25_LANGUAGE the collection records, or re-index into a new collection (set QDRANT_COLLECTION or RAG_COLLECTION, e.g. docs-fr).",
  },
  RAG_STORE_NOT_READY: { status: 503, message: 'The index is not open yet. Run `pnpm ingest` first, or wait for the store to start.' },
  RAG_STORE_LOADING: { status: 503, message: 'The embedded index is being loaded into memory; queries wait for it, and /readyz answers 200 once it is loaded.' },
  RAG_STORE_UNAVAILABLE: { status: 503, message: 'The vector store is unreachable or failing. Check QDRANT_URL and the Qdrant service.' },
  RAG_STORE_TIMEOUT: { status: 504, message: 'The vector store did not answer in time.' },
  RAG_EMBED_UNAVAILABLE: { status: 503, message: 'The embedding server is unreachable or failing. Check EMBED_URL and the TEI service.' },
  RAG_EMBED_TIMEOUT: { status: 504, message: 'The embedding server did not answer in time (EMBED_TIMEOUT_MS).' },
  RAG_EMBED_BATCH_TOO_LARGE: {
    status: 500,
    message: "The embedding server refused the batch size. Lower EMBED_BATCH_SIZE or raise TEI's --max-client-batch-size.",
  },
  RAG_RERANK_UNAVAILABLE: { status: 503, message: 'The reranker is unreachable or failing. Check RERANK_URL and the TEI reranker.' },
  RAG_RERANK_TIMEOUT: { status: 504, message: 'The reranker did not answer in time (RERANK_TIMEOUT_MS).' },
  RAG_GATEWAY_UNAVAILABLE: { status: 503, message: 'The LLM gateway is unreachable or failing. Check GATEWAY_URL and the gateway.' },
  RAG_GATEWAY_TIMEOUT: { status: 504, message: 'The LLM gateway did not answer in time (GATEWAY_TIMEOUT_MS).' },
  RAG_CONVERTER_UNAVAILABLE: { status: 503, message: 'The document converter is unreachable or failing. Check DOCLING_URL.' },
  RAG_SOURCE_UNAVAILABLE: { status: 503, message: 'The document source cannot be read. Check the path or bucket and its credentials.' },
  RAG_ACCESS_FILE_INVALID: {
    status: 500,
    message:
      'The folder\'s .rag-access.yaml cannot be read, so nothing was indexed (restricted documents must never be indexed as public). Expected: `rules: [{path: "hr/**", groups: [hr]}]`, each rule with a glob and at least one group.',
  },
  RAG_ACCESS_WOULD_PUBLISH: {
    status: 409,
    message:
      'Restricted documents were left as they are instead of being made public: the folder has no .rag-access.yaml, yet the index holds them with access groups (a renamed, moved or deleted access file). Restore the file; to make them public on purpose, run again with --allow-publish (or keep a .rag-access.yaml with `rules: []`). The ingest command exits 1.',
  },
  RAG_DOCUMENT_UNREADABLE: { status: 422, message: 'The document could not be converted to text.' },
  RAG_DOCUMENT_TOO_LARGE: {
    status: 413,
    message: 'The document is larger than INGEST_MAX_FILE_BYTES and was not indexed; its previous points, if any, are kept. Split it, or raise INGEST_MAX_FILE_BYTES.',
  },
  RAG_DOCUMENT_TOO_COMPLEX: {
    status: 422,
    message:
      'The document is past the limits set on converting and parsing it (a DOCX or PPTX archive that inflates too far, a PDF whose streams inflate past INGEST_CONVERT_BUFFERS_MB, an HTML page larger than INGEST_MAX_HTML_BYTES, a conversion past INGEST_CONVERT_MEMORY_MB of heap, Markdown or HTML nested too deep, a line too long; see docs/ingestion.md#limits) and was not indexed; its previous points, if any, are kept: a hostile file, or a document to split.',
  },
  RAG_CONVERSION_TIMEOUT: {
    status: 422,
    message:
      'Converting and chunking the document took longer than INGEST_CONVERT_TIMEOUT_MS (default 120 s) and was stopped; it was not indexed, its previous points, if any, are kept, and the other documents went on. Raise INGEST_CONVERT_TIMEOUT_MS for a document that is only long, or split it.',
  },
  RAG_BACKUP_UNVERIFIED: {
    status: 409,
    message:
      'The backup was not restored: a snapshot in the bucket carries no qdrant-checksum metadata (or its layout names a missing object, or layout.json is not a layout a backup wrote: not JSON, the wrong shape, over 1 MiB), so nothing shows that a backup wrote it. Restore a backup the backup job wrote, or pass --allow-unverified if you know where this one comes from.',
  },
  RAG_BACKUP_CHECKSUM_MISMATCH: {
    status: 409,
    message:
      'The backup was not restored: a snapshot does not match the checksum its backup recorded (the bytes, or its metadata against layout.json, differ). The object was changed in the bucket: restore an older backup.',
  },
  RAG_BACKUP_LAYOUT_MISMATCH: {
    status: 409,
    message:
      'The backup was not restored: a Qdrant snapshot holds the shards of the peer that wrote it, and the cluster no longer lays the collection out as the backup records (another peer set, or other shards on a peer). Restore into a cluster of the same peers, with the collection created with the same shard count, or re-ingest from the bucket.',
  },
  RAG_PRUNE_REFUSED: {
    status: 409,
    message:
      'Nothing was pruned: the listing is empty or would delete more than INGEST_MAX_PRUNE_RATIO of the indexed documents, which is what a mistyped folder, bucket or prefix looks like. New and changed documents were written. Check the source; if the deletions are meant, run again with --force-prune. The ingest command exits 1.',
  },
  RAG_INGEST_INTERRUPTED: {
    status: 503,
    message:
      'The ingest run was stopped (SIGTERM or SIGINT) before it finished: the writes in progress were completed, and documents it did not reach were not pruned. Run it again: unchanged documents are skipped, so it carries on where this one stopped. The ingest command exits 3.',
  },
  RAG_CLIENT_CLOSED: { status: 499, message: 'The client closed the request.' },
  RAG_SHUTTING_DOWN: { status: 503, message: 'The server is shutting down; retry on another replica.' },
  RAG_INTERNAL: { status: 500, message: 'Internal error. The server log has the details.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorCatalog;

export class RagError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** What this occurrence adds to the code's message (the same error can be made again from code and detail). */
  readonly detail: string | undefined;

  constructor(code: ErrorCode, detail?: string, options?: { cause?: unknown }) {
    const base = errorCatalog[code].message;
    super(detail ? `${base} ${detail}` : base, options);
    this.name = 'RagError';
    this.code = code;
    this.status = errorCatalog[code].status;
    this.detail = detail;
  }
}

export function isRagError(error: unknown): error is RagError {
  return error instanceof RagError;
}

/** Wraps anything that is not already a RagError as RAG_INTERNAL, keeping it as the cause for logs. */
export function toRagError(error: unknown): RagError {
  return isRagError(error) ? error : new RagError('RAG_INTERNAL', undefined, { cause: error });
}

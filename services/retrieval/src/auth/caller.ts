/**
 * Who sent a request, once its API key matched (RAG_AUTH_FILE). Routes read `request.caller?.groups` to
 * filter documents: undefined when no auth file is configured, so only public documents are visible.
 */
export interface Caller {
  /** The key's name from the file: the one identity logs and metrics carry, never the key or its hash. */
  name: string;
  /** Document groups this key may read, besides public documents. */
  groups: string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | undefined;
  }
}

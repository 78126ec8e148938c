import { RagError } from '../errors.ts';
import { httpDispatcher } from '../http/http-dispatcher.ts';

export interface QdrantAliasesOptions {
  url: string;
  apiKey?: string | undefined;
  timeoutMs?: number | undefined;
}

/**
 * Collection aliases through Qdrant's REST API (https://api.qdrant.tech/v-1-17-x/api-reference/aliases):
 * `GET /aliases` → `{aliases: [{alias_name, collection_name}]}`, and `POST /collections/aliases` with
 * `{actions: [{delete_alias: {alias_name}}, {create_alias: {collection_name, alias_name}}]}`, applied
 * together: no reader sees the alias missing or half-moved. Changing aliases needs the full API key.
 */
export class QdrantAliases {
  constructor(private readonly options: QdrantAliasesOptions) {}

  /** The collection an alias points to, or undefined when the name is no alias. */
  async target(alias: string): Promise<string | undefined> {
    const response = await this.call('GET', '/aliases');
    const { aliases } = ((await response.json()) as { result: { aliases: Array<{ alias_name: string; collection_name: string }> } }).result;
    return aliases.find((candidate) => candidate.alias_name === alias)?.collection_name;
  }

  /**
   * The collection a process should use for `name`: its target when `name` is an alias, else `name`.
   * Resolved once, at start: a running process keeps the collection it opened (and the embedding model
   * locked to it) when the alias moves, so no answer mixes two models; a restart follows the alias.
   */
  async pin(name: string): Promise<string> {
    return (await this.target(name)) ?? name;
  }

  /** Points `alias` at `collection` in one atomic call; returns the collection it pointed to before. */
  async flip(alias: string, collection: string): Promise<string | undefined> {
    const previous = await this.target(alias);
    const actions = [...(previous ? [{ delete_alias: { alias_name: alias } }] : []), { create_alias: { collection_name: collection, alias_name: alias } }];
    await this.call('POST', '/collections/aliases', { actions });
    return previous;
  }

  private async call(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { ...(this.options.apiKey ? { 'api-key': this.options.apiKey } : {}), ...(body ? { 'content-type': 'application/json' } : {}) };
    const url = `${this.options.url.replace(/\/$/, '')}${path}`;
    const response = await fetch(url, { method, headers, body: body ? JSON.stringify(body) : undefined, signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000), dispatcher: httpDispatcher }).catch((error: unknown) => {
      throw new RagError('RAG_STORE_UNAVAILABLE', `Cannot reach Qdrant for ${method} ${path}: ${(error as Error).message}`, { cause: error });
    });
    if (!response.ok) throw new RagError('RAG_STORE_UNAVAILABLE', `Qdrant answered ${response.status} to ${method} ${path}: ${(await response.text().catch(() => '')).slice(0, 300)}`);
    return response;
  }
}

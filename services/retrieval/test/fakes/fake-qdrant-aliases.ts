/**
 * Collection aliases for the fake Qdrant, as Qdrant documents them (v1.17,
 * https://api.qdrant.tech/v-1-17-x/api-reference/aliases): `POST /collections/aliases` with
 * `{actions: [{create_alias: {collection_name, alias_name}} | {delete_alias: {alias_name}} |
 * {rename_alias: {old_alias_name, new_alias_name}}]}` applied all together or not at all, `GET /aliases`,
 * `GET /collections/{c}/aliases`; an alias works wherever a collection name does ("available under both
 * names for search, retrieve, …"), resolved on each request.
 */
import type { ServerResponse } from 'node:http';
import { sendJson, type RecordedRequest } from '../../../../packages/core/test/adapters/fake-server.ts';
import { qdrantError } from './fake-qdrant.ts';

type Handler = (request: RecordedRequest, response: ServerResponse) => void;

export class FakeQdrantAliases {
  readonly aliases = new Map<string, string>();
  /** The collection each data request reached, after alias resolution, in order. */
  readonly reached: string[] = [];

  constructor(
    private readonly inner: Handler,
    private readonly collectionExists: (name: string) => boolean,
  ) {}

  handle = (request: RecordedRequest, response: ServerResponse): void => {
    const url = new URL(request.path, 'http://qdrant');
    if (request.method === 'POST' && url.pathname === '/collections/aliases') return this.update(request.body as { actions: Array<Record<string, any>> }, response);
    if (request.method === 'GET' && url.pathname === '/aliases') return ok(response, { aliases: this.list() });
    const match = /^\/collections\/([^/]+)(\/.*)?$/.exec(url.pathname);
    if (match && request.method === 'GET' && match[2] === '/aliases') {
      return ok(response, { aliases: this.list().filter((alias) => alias.collection_name === decodeURIComponent(match[1]!)) });
    }
    if (!match) return this.inner(request, response);
    const name = decodeURIComponent(match[1]!);
    const collection = this.aliases.get(name) ?? name;
    this.reached.push(collection);
    const path = `/collections/${encodeURIComponent(collection)}${match[2] ?? ''}${url.search}`;
    this.inner({ ...request, path }, response);
  };

  private list() {
    return [...this.aliases].map(([alias_name, collection_name]) => ({ alias_name, collection_name }));
  }

  private update(body: { actions: Array<Record<string, any>> }, response: ServerResponse): void {
    const next = new Map(this.aliases);
    for (const action of body.actions) {
      if (action.create_alias) {
        const { collection_name, alias_name } = action.create_alias;
        if (!this.collectionExists(collection_name)) return qdrantError(response, 404, `Not found: Collection \`${collection_name}\` doesn't exist!`);
        if (this.collectionExists(alias_name)) return qdrantError(response, 400, `Wrong input: Collection \`${alias_name}\` already exists!`);
        next.set(alias_name, collection_name);
      } else if (action.delete_alias) {
        if (!next.delete(action.delete_alias.alias_name)) return qdrantError(response, 404, `Not found: Alias ${action.delete_alias.alias_name} does not exists!`);
      } else if (action.rename_alias) {
        const target = next.get(action.rename_alias.old_alias_name);
        if (!target) return qdrantError(response, 404, `Not found: Alias ${action.rename_alias.old_alias_name} does not exists!`);
        next.delete(action.rename_alias.old_alias_name);
        next.set(action.rename_alias.new_alias_name, target);
      } else return qdrantError(response, 400, 'Bad request: unknown alias operation');
    }
    this.aliases.clear();
    for (const [alias, collection] of next) this.aliases.set(alias, collection);
    ok(response, true);
  }
}

function ok(response: ServerResponse, result: unknown): void {
  sendJson(response, 200, { status: 'ok', result, time: 0.0001 });
}

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CRC32C } from '@google-cloud/storage';
import { LoopbackServer } from './loopback-server.ts';

/**
 * The slice of the GCS JSON API that @google-cloud/storage calls to list and download:
 * `GET /storage/v1/b/{bucket}/o?prefix=&pageToken=&maxResults=` → `{kind, items, nextPageToken}` and
 * `GET /storage/v1/b/{bucket}/o/{name}?alt=media` → the bytes with an `x-goog-hash` header.
 * https://cloud.google.com/storage/docs/json_api/v1/objects/list
 * Listed objects carry their custom `metadata` (the default `noAcl` projection), and a `fields` selection
 * such as `items(name,md5Hash),nextPageToken` trims them as the real API does (only that form is parsed).
 * Uploads: `POST /upload/storage/v1/b/{bucket}/o?uploadType=multipart`, a multipart/related body whose
 * first part is the object resource (JSON: metadata, name unless the query has it) and whose second part is the bytes; and
 * `uploadType=media` with the name in the query; `DELETE …/o/{name}` (https://cloud.google.com/storage/docs/uploading-objects).
 */
export interface FakeObject {
  bytes: Buffer;
  generation: string;
  metageneration: number;
  md5Hash: string;
  /** Custom metadata (`x-goog-meta-*` on upload, `--custom-metadata` in gcloud). */
  metadata?: Record<string, string> | undefined;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
}

export class FakeGcsServer extends LoopbackServer {
  readonly requests: RecordedRequest[] = [];
  private readonly objects = new Map<string, FakeObject>();
  private generation = 1_700_000_000_000_000;

  /** The API's own page limit; small, so that tests list more than one page. */
  constructor(
    readonly bucket: string,
    private readonly maxPageSize = 1000,
  ) {
    super();
  }

  /** Like an upload: a new generation every time, even for the same bytes. */
  put(name: string, content: string | Buffer, metadata?: Record<string, string>): void {
    const bytes = Buffer.from(content);
    this.generation += 1;
    this.objects.set(name, { bytes, generation: String(this.generation), metageneration: 1, md5Hash: createHash('md5').update(bytes).digest('base64'), metadata });
  }

  /** Like `gcloud storage objects update --custom-metadata`: same generation and bytes, a new metageneration. */
  setMetadata(name: string, metadata: Record<string, string> | undefined): void {
    const object = this.objects.get(name)!;
    object.metadata = metadata;
    object.metageneration += 1;
  }

  remove(name: string): void {
    this.objects.delete(name);
  }

  downloads(): string[] {
    return this.requests.filter((request) => request.query.get('alt') === 'media').map((request) => decodeURIComponent(request.path.split('/o/')[1] ?? ''));
  }

  lists(): RecordedRequest[] {
    return this.requests.filter((request) => request.path.endsWith('/o'));
  }

  /** The stored object, as a test reads back what was uploaded. */
  get(name: string): FakeObject | undefined {
    return this.objects.get(name);
  }

  protected override handle(request: IncomingMessage, response: ServerResponse): void | Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    this.requests.push({ method: request.method ?? '', path: url.pathname, query: url.searchParams });
    if (request.method === 'POST' && url.pathname.replace(/^\/upload\/storage\/v1(?=\/b\/)/, '') === `/b/${this.bucket}/o`) return this.upload(request, url.searchParams, response);
    // The client drops the /storage/v1 root when STORAGE_EMULATOR_HOST is a bare host (emulators accept both).
    const path = url.pathname.replace(/^\/storage\/v1(?=\/b\/)/, '');
    const listPath = `/b/${this.bucket}/o`;
    if (request.method === 'GET' && path === listPath) return this.list(url.searchParams, response);
    if (request.method === 'GET' && path.startsWith(`${listPath}/`) && url.searchParams.get('alt') === 'media') {
      return this.download(decodeURIComponent(path.slice(listPath.length + 1)), response);
    }
    if (request.method === 'DELETE' && path.startsWith(`${listPath}/`)) return this.deleteObject(decodeURIComponent(path.slice(listPath.length + 1)), response);
    sendJson(response, 404, { error: { code: 404, message: `No such route: ${request.method} ${url.pathname}` } });
  }

  /** `DELETE /storage/v1/b/{bucket}/o/{name}` → 204, or 404 for an unknown object. */
  private deleteObject(name: string, response: ServerResponse): void {
    if (!this.objects.delete(name)) return sendJson(response, 404, { error: { code: 404, message: `No such object: ${this.bucket}/${name}` } });
    response.writeHead(204).end();
  }

  private async upload(request: IncomingMessage, query: URLSearchParams, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let resource: { name?: string; metadata?: Record<string, string> } = { name: query.get('name') ?? undefined };
    let bytes: Buffer = body;
    if (query.get('uploadType') === 'multipart') {
      const boundary = /boundary="?([^";]+)"?/.exec(request.headers['content-type'] ?? '')?.[1];
      if (!boundary) return sendJson(response, 400, { error: { code: 400, message: 'multipart upload without a boundary' } });
      const [metadataPart, mediaPart] = multipartParts(body, boundary);
      // The object's name comes in the query (as @google-cloud/storage sends it) or in the resource.
      resource = { ...resource, ...JSON.parse(partBody(metadataPart!).toString('utf8')) };
      bytes = partBody(mediaPart!);
    }
    if (!resource.name) return sendJson(response, 400, { error: { code: 400, message: 'upload without an object name' } });
    this.put(resource.name, bytes, resource.metadata);
    sendJson(response, 200, this.resource(resource.name));
  }

  private list(query: URLSearchParams, response: ServerResponse): void {
    const prefix = query.get('prefix') ?? '';
    const names = [...this.objects.keys()].filter((name) => name.startsWith(prefix)).sort();
    const start = Number(query.get('pageToken') ?? 0);
    const pageSize = Math.min(Number(query.get('maxResults') ?? this.maxPageSize), this.maxPageSize);
    const page = names.slice(start, start + pageSize);
    const next = start + pageSize < names.length ? String(start + pageSize) : undefined;
    const itemFields = listedItemFields(query.get('fields'));
    sendJson(response, 200, {
      kind: 'storage#objects',
      items: page.map((name) => pick(this.resource(name), itemFields)),
      ...(next ? { nextPageToken: next } : {}),
    });
  }

  private download(name: string, response: ServerResponse): void {
    const object = this.objects.get(name);
    if (!object) return sendJson(response, 404, { error: { code: 404, message: `No such object: ${this.bucket}/${name}` } });
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': object.bytes.length,
      'x-goog-generation': object.generation,
      'x-goog-hash': `md5=${object.md5Hash}`,
    });
    response.end(object.bytes);
  }

  private resource(name: string): Record<string, unknown> {
    const object = this.objects.get(name)!;
    return {
      kind: 'storage#object',
      bucket: this.bucket,
      name,
      generation: object.generation,
      metageneration: String(object.metageneration),
      md5Hash: object.md5Hash,
      // What the client checks an upload against (its default validation is CRC32C).
      crc32c: crc32cOf(object.bytes),
      size: String(object.bytes.length),
      contentType: 'application/octet-stream',
      updated: '2026-01-01T00:00:00.000Z',
      ...(object.metadata ? { metadata: object.metadata } : {}),
    };
  }
}

function crc32cOf(bytes: Buffer): string {
  const checksum = new CRC32C();
  checksum.update(bytes);
  return checksum.toString();
}

/** The parts of a multipart body, each with its headers, split on `--boundary` lines. */
function multipartParts(body: Buffer, boundary: string): Buffer[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Buffer[] = [];
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    parts.push(body.subarray(start + delimiter.length + 2, next - 2)); // past the CRLF after the delimiter, before the one ending the part
    start = next;
  }
  return parts;
}

/** A part's content, after the blank line that ends its headers. */
function partBody(part: Buffer): Buffer {
  return part.subarray(part.indexOf('\r\n\r\n') + 4);
}

/** The item fields a `fields=items(a,b),nextPageToken` selection keeps; undefined: every field. */
function listedItemFields(fields: string | null): Set<string> | undefined {
  if (fields === null) return undefined;
  const items = /items\(([^)]*)\)/.exec(fields);
  return new Set(items ? items[1]!.split(',').map((field) => field.trim()) : []);
}

function pick(resource: Record<string, unknown>, fields: Set<string> | undefined): Record<string, unknown> {
  return fields ? Object.fromEntries(Object.entries(resource).filter(([key]) => fields.has(key))) : resource;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FolderDocuments, type DocumentOrigin } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { handbookFolder, readJson, startTestStack, type TestStack } from './test-stack.ts';

const ONCALL_KEY = 'sk-oncall-documents-1';
const PUBLIC_KEY = 'sk-public-documents-2';
const keysFile = `
keys:
  - {name: oncall, sha256: ${hashApiKey(ONCALL_KEY)}, groups: [oncall]}
  - {name: public, sha256: ${hashApiKey(PUBLIC_KEY)}, groups: []}
`;

let root: string;
let folder: string;
let stack: TestStack;
let bare: TestStack;
let bucket: TestStack;

/** A real deep path: its URL-encoded name is 180 characters, past Fastify's default maxParamLength of 100. */
const DEEP_FOLDER = 'teams/platform engineering/quarterly reviews/2026 Q3 (draft)/appendices';
const DEEP_SOURCE = `${DEEP_FOLDER}/incident-retrospective-summary.md`;

const SIGNED_EXPIRY = new Date('2026-12-01T12:05:00Z');

/** A GCS-like origin (GcsDocuments' own signing is tested in packages/core): each source is an object of the bucket, behind a signed URL. */
const bucketOrigin: DocumentOrigin = {
  locate: async (source) => ({ kind: 'redirect', url: `https://storage.googleapis.com/handbook/${encodeURI(source)}?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=00ff`, expiresAt: SIGNED_EXPIRY }),
};

async function get(path: string, key?: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${stack.baseUrl}${path}`, { headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers }, redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rag-documents-'));
  folder = join(root, 'corpus');
  await cp(handbookFolder, folder, { recursive: true });
  await writeFile(join(folder, '.rag-access.yaml'), 'rules:\n  - {path: "ops/**", groups: [oncall]}\n');
  await writeFile(join(root, 'secret.md'), '# Secret\n\nOutside the source folder.\n');
  await mkdir(join(folder, DEEP_FOLDER), { recursive: true });
  await writeFile(join(folder, DEEP_SOURCE), '# Quarterly review\n\nThe on-call rota changes in spring.\n');
  await mkdir(join(folder, 'pub'));
  await writeFile(join(folder, 'pub', 'swap.md'), '# Swap\n\nA public page about rotas.\n');
  const apiKeys = parseApiKeys(keysFile, 'keys.yaml');
  stack = await startTestStack({ folder, apiKeys, documents: new FolderDocuments(folder) });
  bare = await startTestStack({ folder });
  bucket = await startTestStack({ folder, apiKeys, documents: bucketOrigin });
});

afterAll(async () => {
  await stack?.close();
  await bare?.close();
  await bucket?.close();
  await rm(root, { recursive: true, force: true });
});

describe('GET /documents/<source> over a folder source', () => {
  it('serves a cited file, sandboxed, named as citations name it (URL-encoded or not)', async () => {
    const served = await get('/documents/backups.md', PUBLIC_KEY);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(served.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(served.text).toBe(await readFile(join(folder, 'backups.md'), 'utf8'));
    const oncall = await get(`/documents/${encodeURIComponent('ops/alerts.md')}`, ONCALL_KEY);
    expect(oncall.status).toBe(200);
    expect(oncall.text).toBe(await readFile(join(folder, 'ops/alerts.md'), 'utf8'));
  });

  it('answers for a document exactly as for its passages: no key 401, outside the groups 404 as missing', async () => {
    expect((await get('/documents/backups.md')).status).toBe(401);
    const hidden = await get(`/documents/${encodeURIComponent('ops/alerts.md')}`, PUBLIC_KEY);
    const missing = await get('/documents/nowhere.md', PUBLIC_KEY);
    expect(hidden.status).toBe(404);
    expect(JSON.parse(hidden.text).error.code).toBe('RAG_DOCUMENT_NOT_FOUND');
    expect(JSON.parse(hidden.text).error.message).toBe(JSON.parse(missing.text).error.message.replace('nowhere.md', 'ops/alerts.md'));
  });

  it('never leaves the folder: ../ in any spelling, absolute paths', async () => {
    for (const path of ['/documents/..%2Fsecret.md', '/documents/%2E%2E%2Fsecret.md', '/documents/%2E%2E/secret.md', '/documents/ops%2F..%2F..%2Fsecret.md', `/documents/${encodeURIComponent(join(root, 'secret.md'))}`]) {
      const refused = await get(path, ONCALL_KEY);
      expect(refused.status, path).toBe(404);
      expect(refused.text).not.toContain('Outside the source folder');
    }
  });

  it('follows no symbolic link out of the folder, even one replacing an indexed file', async () => {
    // The origin itself refuses, whatever the access check before it would say.
    for (const source of ['../secret.md', 'ops/../../secret.md', join(root, 'secret.md'), '..\\secret.md']) {
      await expect(new FolderDocuments(folder).locate(source), source).rejects.toMatchObject({ code: 'RAG_DOCUMENT_NOT_FOUND' });
    }
    const located = await new FolderDocuments(folder).locate('ops/alerts.md');
    expect(located).toMatchObject({ kind: 'file', path: join(folder, 'ops/alerts.md') });
    if (located.kind === 'file') await located.file.close();
    const original = await readFile(join(folder, 'onboarding.md'));
    await unlink(join(folder, 'onboarding.md'));
    await symlink(join(root, 'secret.md'), join(folder, 'onboarding.md'));
    try {
      const refused = await get('/documents/onboarding.md', PUBLIC_KEY);
      expect(refused.status).toBe(404);
      expect(refused.text).not.toContain('Outside the source folder');
    } finally {
      await unlink(join(folder, 'onboarding.md'));
      await writeFile(join(folder, 'onboarding.md'), original);
    }
  });

  it('serves no link inside the folder either: a public path linked to a restricted file, or through a linked folder', async () => {
    // Issue 32 (High 2): pub/swap.md, indexed as public, replaced by a link to a file of the oncall group.
    const swap = join(folder, 'pub', 'swap.md');
    const original = await readFile(swap);
    expect((await get(`/documents/${encodeURIComponent('pub/swap.md')}`, PUBLIC_KEY)).status).toBe(200);
    await unlink(swap);
    await symlink('../ops/alerts.md', swap);
    try {
      const refused = await get(`/documents/${encodeURIComponent('pub/swap.md')}`, PUBLIC_KEY);
      expect(refused.status).toBe(404);
      expect(JSON.parse(refused.text).error.code).toBe('RAG_DOCUMENT_NOT_FOUND');
    } finally {
      await unlink(swap);
      await writeFile(swap, original);
    }
    // The folder on the way is the link: pub -> hidden, where a swap.md nobody indexed waits.
    await mkdir(join(folder, 'hidden'));
    await writeFile(join(folder, 'hidden', 'swap.md'), 'salaries');
    await rename(join(folder, 'pub'), join(folder, 'pub-real'));
    await symlink('hidden', join(folder, 'pub'));
    try {
      const refused = await get(`/documents/${encodeURIComponent('pub/swap.md')}`, PUBLIC_KEY);
      expect(refused.status).toBe(404);
      expect(refused.text).not.toContain('salaries');
    } finally {
      await unlink(join(folder, 'pub'));
      await rename(join(folder, 'pub-real'), join(folder, 'pub'));
      await rm(join(folder, 'hidden'), { recursive: true });
    }
  });

  it('serves only regular files: a directory or a FIFO put at an indexed path is 404, at once', async () => {
    const onboarding = join(folder, 'onboarding.md');
    const original = await readFile(onboarding);
    await unlink(onboarding);
    await mkdir(onboarding);
    try {
      await expect(new FolderDocuments(folder).locate('onboarding.md')).rejects.toMatchObject({ code: 'RAG_DOCUMENT_NOT_FOUND' });
      const refused = await get('/documents/onboarding.md', PUBLIC_KEY);
      expect(refused.status).toBe(404);
      expect(JSON.parse(refused.text).error.code).toBe('RAG_DOCUMENT_NOT_FOUND');
      await rm(onboarding, { recursive: true });
      // A FIFO with no writer: opened without O_NONBLOCK it would hold the request forever.
      await promisify(execFile)('mkfifo', [onboarding]);
      await expect(new FolderDocuments(folder).locate('onboarding.md')).rejects.toMatchObject({ code: 'RAG_DOCUMENT_NOT_FOUND' });
    } finally {
      await rm(onboarding, { recursive: true, force: true });
      await writeFile(onboarding, original);
    }
  });

  /** RFC 9110 §14 (https://www.rfc-editor.org/rfc/rfc9110#section-14): byte ranges, 206 with Content-Range, 416 with `bytes *∕length`. */
  it('honours one byte range (206), refuses an unsatisfiable one (416), sends the whole file for several', async () => {
    const whole = await readFile(join(folder, 'backups.md'), 'utf8');
    const length = Buffer.byteLength(whole);
    const full = await get('/documents/backups.md', PUBLIC_KEY);
    expect(full.headers.get('accept-ranges')).toBe('bytes');
    expect(full.headers.get('content-length')).toBe(String(length));
    const first = await get('/documents/backups.md', PUBLIC_KEY, { range: 'bytes=0-9' });
    expect(first.status).toBe(206);
    expect(first.headers.get('content-range')).toBe(`bytes 0-9/${length}`);
    expect(first.text).toBe(whole.slice(0, 10));
    const suffix = await get('/documents/backups.md', PUBLIC_KEY, { range: 'bytes=-5' });
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get('content-range')).toBe(`bytes ${length - 5}-${length - 1}/${length}`);
    expect(suffix.text).toBe(whole.slice(-5));
    const open = await get('/documents/backups.md', PUBLIC_KEY, { range: `bytes=${length - 3}-` });
    expect(open.text).toBe(whole.slice(-3));
    const unsatisfiable = await get('/documents/backups.md', PUBLIC_KEY, { range: `bytes=${length}-` });
    expect(unsatisfiable.status).toBe(416);
    expect(unsatisfiable.headers.get('content-range')).toBe(`bytes */${length}`);
    const several = await get('/documents/backups.md', PUBLIC_KEY, { range: 'bytes=0-1,5-6' });
    expect(several.status).toBe(200);
    expect(several.text).toBe(whole);
    const malformed = await get('/documents/backups.md', PUBLIC_KEY, { range: 'lines=1-2' });
    expect(malformed.status).toBe(200);
  });

  it('keeps every answer out of shared caches: Cache-Control private, no-store on 200, 206, 404', async () => {
    for (const [path, headers] of [['/documents/backups.md', {}], ['/documents/backups.md', { range: 'bytes=0-0' }], ['/documents/nowhere.md', {}]] as const) {
      const answer = await get(path, PUBLIC_KEY, headers);
      expect(answer.headers.get('cache-control'), `${path} ${answer.status}`).toBe('private, no-store');
    }
  });

  /**
   * Fastify routes a parameter longer than maxParamLength (default 100) to "not found"
   * (https://fastify.dev/docs/latest/Reference/Server/#maxparamlength): such names got 405 before.
   */
  it('opens documents with long names: a deep path is served, a name past 4,096 characters is 414 RAG_DOCUMENT_NAME_TOO_LONG', async () => {
    expect(encodeURIComponent(DEEP_SOURCE).length).toBeGreaterThan(100);
    const deep = await get(`/documents/${encodeURIComponent(DEEP_SOURCE)}`, PUBLIC_KEY);
    expect(deep.status).toBe(200);
    expect(deep.text).toContain('on-call rota');
    const tooLong = await get(`/documents/${encodeURIComponent(`docs/${'x'.repeat(4100)}.md`)}`, PUBLIC_KEY);
    expect(tooLong.status).toBe(414);
    expect(JSON.parse(tooLong.text).error.code).toBe('RAG_DOCUMENT_NAME_TOO_LONG');
  });

  it('says so when no document origin is configured', async () => {
    const response = await fetch(`${bare.baseUrl}/documents/backups.md`);
    expect(response.status).toBe(404);
    expect((await readJson(response)).error.code).toBe('RAG_DOCUMENTS_NOT_SERVED');
  });
});

describe('GET /documents/<source> over a GCS source', () => {
  async function getFromBucket(path: string, headers: Record<string, string>) {
    const response = await fetch(`${bucket.baseUrl}${path}`, { headers: { authorization: `Bearer ${PUBLIC_KEY}`, ...headers }, redirect: 'manual' });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  it('redirects to the signed URL of the object, never cached', async () => {
    const redirected = await getFromBucket('/documents/backups.md', {});
    expect(redirected.status).toBe(302);
    expect(redirected.headers.get('cache-control')).toBe('private, no-store');
    expect(redirected.headers.get('location')).toBe('https://storage.googleapis.com/handbook/backups.md?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=00ff');
  });

  it('gives the signed URL and its expiry as JSON to a client that asks for JSON (a page holding a key cannot follow the redirect with it)', async () => {
    const link = await getFromBucket('/documents/backups.md', { accept: 'application/json, */*;q=0.1' });
    expect(link.status).toBe(200);
    expect(link.headers.get('content-type')).toMatch(/^application\/json/);
    expect(link.headers.get('cache-control')).toBe('private, no-store');
    expect(JSON.parse(link.text)).toEqual({ url: 'https://storage.googleapis.com/handbook/backups.md?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=00ff', expires_at: '2026-12-01T12:05:00.000Z' });
  });

  it('routes a long gs:// name to the document route (a 1,000-character object name): not indexed, so 404 with its code', async () => {
    const source = `gs://handbook-archive-eu/${'reports/2026/'.repeat(40)}board minutes (final).pdf`;
    const answer = await getFromBucket(`/documents/${encodeURIComponent(source)}`, { accept: 'application/json' });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text).error.code).toBe('RAG_DOCUMENT_NOT_FOUND');
  });

  it('keeps the access rules: a document outside the groups is 404 whatever is accepted', async () => {
    const hidden = await getFromBucket(`/documents/${encodeURIComponent('ops/alerts.md')}`, { accept: 'application/json' });
    expect(hidden.status).toBe(404);
    expect(JSON.parse(hidden.text).error.code).toBe('RAG_DOCUMENT_NOT_FOUND');
  });
});

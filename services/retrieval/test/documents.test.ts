import { cp, mkdtemp, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
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

const SIGNED_EXPIRY = new Date('2026-12-01T12:05:00Z');

/** A GCS-like origin (GcsDocuments' own signing is tested in packages/core): each source is an object of the bucket, behind a signed URL. */
const bucketOrigin: DocumentOrigin = {
  locate: async (source) => ({ kind: 'redirect', url: `https://storage.googleapis.com/handbook/${encodeURI(source)}?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=00ff`, expiresAt: SIGNED_EXPIRY }),
};

async function get(path: string, key?: string) {
  const response = await fetch(`${stack.baseUrl}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {}, redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rag-documents-'));
  folder = join(root, 'corpus');
  await cp(handbookFolder, folder, { recursive: true });
  await writeFile(join(folder, '.rag-access.yaml'), 'rules:\n  - {path: "ops/**", groups: [oncall]}\n');
  await writeFile(join(root, 'secret.md'), '# Secret\n\nOutside the source folder.\n');
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
    await expect(new FolderDocuments(folder).locate('ops/alerts.md')).resolves.toEqual({ kind: 'file', path: join(folder, 'ops/alerts.md') });
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
    expect(redirected.headers.get('cache-control')).toBe('no-store');
    expect(redirected.headers.get('location')).toBe('https://storage.googleapis.com/handbook/backups.md?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=00ff');
  });

  it('gives the signed URL and its expiry as JSON to a client that asks for JSON (a page holding a key cannot follow the redirect with it)', async () => {
    const link = await getFromBucket('/documents/backups.md', { accept: 'application/json, */*;q=0.1' });
    expect(link.status).toBe(200);
    expect(link.headers.get('content-type')).toMatch(/^application\/json/);
    expect(link.headers.get('cache-control')).toBe('no-store');
    expect(JSON.parse(link.text)).toEqual({ url: 'https://storage.googleapis.com/handbook/backups.md?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=00ff', expires_at: '2026-12-01T12:05:00.000Z' });
  });

  it('keeps the access rules: a document outside the groups is 404 whatever is accepted', async () => {
    const hidden = await getFromBucket(`/documents/${encodeURIComponent('ops/alerts.md')}`, { accept: 'application/json' });
    expect(hidden.status).toBe(404);
    expect(JSON.parse(hidden.text).error.code).toBe('RAG_DOCUMENT_NOT_FOUND');
  });
});

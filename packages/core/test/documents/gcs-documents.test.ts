import { generateKeyPairSync } from 'node:crypto';
import { Storage } from '@google-cloud/storage';
import { describe, expect, it } from 'vitest';
import { GcsDocuments } from '../../src/documents/gcs-documents.ts';

describe('GCS documents: a short-lived V4 signed URL', () => {
  // Signing is local with a service account key (no request to GCS); the URL's fields are those of
  // https://cloud.google.com/storage/docs/access-control/signed-urls (X-Goog-Algorithm, X-Goog-Expires…).
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const storage = new Storage({
    projectId: 'test',
    credentials: { client_email: 'rag-api@test.iam.gserviceaccount.com', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
  });
  const documents = new GcsDocuments(storage, 'handbook');

  it('redirects an object of the bucket to a URL signed for reading it, valid 5 minutes', async () => {
    const before = Date.now();
    const location = await documents.locate('gs://handbook/hr/leave policy.md');
    const expiresAt = (location as { expiresAt: Date }).expiresAt.getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(before + 300_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 300_000);
    expect(location.kind).toBe('redirect');
    const url = new URL((location as { url: string }).url);
    expect(`${url.origin}${url.pathname}`).toBe('https://storage.googleapis.com/handbook/hr/leave%20policy.md');
    expect(url.searchParams.get('X-Goog-Algorithm')).toBe('GOOG4-RSA-SHA256');
    // The library counts the seconds from its own clock at signing: 300, or 299 when a second turned meanwhile.
    expect(Number(url.searchParams.get('X-Goog-Expires'))).toBeGreaterThanOrEqual(299);
    expect(Number(url.searchParams.get('X-Goog-Expires'))).toBeLessThanOrEqual(300);
    expect(url.searchParams.get('X-Goog-Credential')).toMatch(/^rag-api@test\.iam\.gserviceaccount\.com\/\d{8}\/auto\/storage\/goog4_request$/);
    expect(url.searchParams.get('X-Goog-Signature')).toMatch(/^[0-9a-f]{512}$/);
  });

  it('refuses another bucket, or no object', async () => {
    await expect(documents.locate('gs://elsewhere/hr/leave.md')).rejects.toMatchObject({ code: 'RAG_DOCUMENT_NOT_FOUND' });
    await expect(documents.locate('gs://handbook/')).rejects.toMatchObject({ code: 'RAG_DOCUMENT_NOT_FOUND' });
    await expect(documents.locate('hr/leave.md')).rejects.toMatchObject({ code: 'RAG_DOCUMENT_NOT_FOUND' });
  });

  it('a signing failure (no key, no IAM permission) is the source being unavailable, not an internal error', async () => {
    const unsigned = new GcsDocuments(new Storage({ projectId: 'test', credentials: { client_email: 'x@test.iam.gserviceaccount.com', private_key: 'not a key' } }), 'handbook');
    await expect(unsigned.locate('gs://handbook/a.md')).rejects.toMatchObject({ code: 'RAG_SOURCE_UNAVAILABLE' });
  });
});

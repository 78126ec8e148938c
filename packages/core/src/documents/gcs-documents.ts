import type { Storage } from '@google-cloud/storage';
import { RagError } from '../errors.ts';
import type { DocumentLocation, DocumentOrigin } from './document-origin.ts';

/** A signed URL lives this long: enough to follow the redirect, short enough that a leaked link soon stops working. */
export const SIGNED_URL_SECONDS = 300;

/**
 * Objects of the GCS source, served as a short-lived V4 signed URL to redirect to, so the bytes never go
 * through the API. Signing uses the service account of the credentials (Workload Identity signs through
 * IAM's signBlob). https://cloud.google.com/storage/docs/access-control/signing-urls-with-helpers
 * (the library's sample generateV4ReadSignedUrl.js: `{version: 'v4', action: 'read', expires}`).
 */
export class GcsDocuments implements DocumentOrigin {
  constructor(
    private readonly storage: Storage,
    private readonly bucket: string,
    private readonly now: () => number = Date.now,
  ) {}

  async locate(source: string): Promise<DocumentLocation> {
    const location = /^gs:\/\/([^/]+)\/(.+)$/.exec(source);
    if (!location || location[1] !== this.bucket) throw new RagError('RAG_DOCUMENT_NOT_FOUND', `(${source.slice(0, 200)})`);
    try {
      const expires = this.now() + SIGNED_URL_SECONDS * 1000;
      const [url] = await this.storage.bucket(this.bucket).file(location[2]!).getSignedUrl({ version: 'v4', action: 'read', expires });
      return { kind: 'redirect', url, expiresAt: new Date(expires) };
    } catch (error) {
      // Without a key, signing goes through IAM signBlob: the API's service account needs Service Account Token Creator on itself.
      throw new RagError('RAG_SOURCE_UNAVAILABLE', `Cannot sign a URL for ${source.slice(0, 200)}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

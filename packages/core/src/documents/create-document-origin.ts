import type { Config } from '../config.ts';
import type { DocumentOrigin } from './document-origin.ts';
import { FolderDocuments } from './folder-documents.ts';

/**
 * Where GET /documents finds originals, from the configuration: the bucket (signed URLs) when GCS_BUCKET
 * is set, else RAG_DOCUMENTS_DIR; neither: undefined, and the route says so (RAG_DOCUMENTS_NOT_SERVED).
 * The GCS client is imported only when a bucket is configured.
 */
export async function createDocumentOrigin(config: Config): Promise<DocumentOrigin | undefined> {
  if (config.GCS_BUCKET) {
    const [{ Storage }, { GcsDocuments }] = await Promise.all([import('@google-cloud/storage'), import('./gcs-documents.ts')]);
    return new GcsDocuments(new Storage(), config.GCS_BUCKET);
  }
  return config.RAG_DOCUMENTS_DIR ? new FolderDocuments(config.RAG_DOCUMENTS_DIR) : undefined;
}

import { Storage, type File, type GetFilesOptions } from '@google-cloud/storage';
import { parseGroupList } from '../access/groups.ts';
import { RagError } from '../errors.ts';
import { epochSecondsOf, fileTypeOf } from '../search-filter/document-metadata.ts';
import type { DocumentSource, SourceDocument } from './document-source.ts';
import { customFieldsOf } from '../search-filter/custom-metadata-keys.ts';

export interface GcsSourceOptions {
  bucket: string;
  /** Only objects whose name starts with it; '' for the whole bucket. */
  prefix: string;
  /** Objects per list call (the API's maxResults; 1000 at most). */
  pageSize?: number;
  /** Another endpoint than storage.googleapis.com (tests); STORAGE_EMULATOR_HOST works too. */
  apiEndpoint?: string;
  /** A ready client; by default one with Application Default Credentials (Workload Identity in the cluster). */
  storage?: Storage;
}

const DEFAULT_PAGE_SIZE = 1000;
/** Custom metadata key holding an object's access groups, comma-separated (`gcloud storage objects update --custom-metadata=rag-groups=hr`). */
export const GROUPS_METADATA_KEY = 'rag-groups';

/**
 * Every object under a prefix of a bucket, in the API's lexicographic order, page after page.
 * Listing costs no download: the object's MD5 (or, for composite objects that have none, its
 * generation) is the source version that lets an unchanged object be skipped unread. The listing also
 * carries each object's custom metadata (the default `noAcl` projection), where `rag-groups` names the
 * groups allowed to read it.
 */
export class GcsSource implements DocumentSource {
  readonly description: string;
  private readonly storage: Storage;

  constructor(private readonly options: GcsSourceOptions) {
    this.description = `gs://${options.bucket}/${options.prefix}`;
    this.storage = options.storage ?? new Storage(options.apiEndpoint ? { apiEndpoint: options.apiEndpoint } : {});
  }

  async *list(signal?: AbortSignal): AsyncIterable<SourceDocument> {
    const bucket = this.storage.bucket(this.options.bucket);
    let query: GetFilesOptions | null = { prefix: this.options.prefix, maxResults: this.options.pageSize ?? DEFAULT_PAGE_SIZE, autoPaginate: false };
    while (query) {
      signal?.throwIfAborted();
      const [files, nextQuery]: [File[], GetFilesOptions | null, unknown] = await bucket.getFiles(query).catch((error: unknown) => {
        throw new RagError('RAG_SOURCE_UNAVAILABLE', `Cannot list ${this.description}: ${reasonOf(error)}`, { cause: error });
      });
      // A name ending in "/" is the placeholder the console creates for a folder, not a document.
      for (const file of files) if (!file.name.endsWith('/')) yield this.document(file);
      query = nextQuery;
    }
  }

  private document(file: File): SourceDocument {
    const uri = `gs://${this.options.bucket}/${file.name}`;
    const { md5Hash, generation, metadata } = file.metadata;
    const groups = metadata?.[GROUPS_METADATA_KEY];
    const custom = customFieldsOf(customFields(metadata));
    return {
      uri,
      sourceVersion: md5Hash ? `md5:${md5Hash}` : `generation:${String(generation)}`,
      size: file.metadata.size === undefined ? undefined : Number(file.metadata.size),
      groups: parseGroupList(typeof groups === 'string' ? groups : undefined),
      metadata: { type: fileTypeOf(file.name), size: file.metadata.size === undefined ? undefined : Number(file.metadata.size), modifiedAt: epochSecondsOf(file.metadata.updated), meta: custom.meta },
      ...(custom.ignoredKeys.length > 0 ? { ignoredMetaKeys: custom.ignoredKeys } : {}),
      read: async () => {
        try {
          const [bytes] = await file.download();
          return bytes;
        } catch (error) {
          throw new RagError('RAG_SOURCE_UNAVAILABLE', `Cannot download ${uri}: ${reasonOf(error)}`, { cause: error });
        }
      },
    };
  }
}

/** `gs://bucket/some/prefix` → bucket and prefix; anything else is not a GCS location. */
export function parseGcsUri(uri: string): { bucket: string; prefix: string } | undefined {
  const match = /^gs:\/\/([^/]+)\/?(.*)$/.exec(uri);
  return match?.[1] ? { bucket: match[1], prefix: match[2] ?? '' } : undefined;
}

/** An object's custom metadata as search fields: every string key but `rag-groups` (access, not a filter). */
function customFields(metadata: Record<string, unknown> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(metadata ?? {}).filter(([key, value]) => key !== GROUPS_METADATA_KEY && typeof value === 'string') as Array<[string, string]>);
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

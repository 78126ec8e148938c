import type { ErrorCode } from '../errors.ts';
import type { Shard } from './shard.ts';

export interface IngestFailure {
  uri: string;
  reason: string;
  code: ErrorCode;
}

/** Why a run deleted none of the documents its listing lost (RAG_PRUNE_REFUSED). */
export interface PruneRefusal {
  /** Indexed documents the listing no longer has: what pruning would have deleted. */
  deletedDocuments: number;
  indexedDocuments: number;
  /** The numbers, in words, for the RAG_PRUNE_REFUSED line. */
  reason: string;
}

/** What an ingest run did; `toLine()` is the job's last line, which operators grep for. */
export class IngestSummary {
  files = 0;
  chunks = 0;
  upserts = 0;
  deletes = 0;
  unchanged = 0;
  unsupported = 0;
  /** Entries the source passed over that are not documents it reads (a folder's symbolic links); counted in `skipped`. */
  skippedEntries = 0;
  embedCalls = 0;
  /** Documents whose access groups alone changed: groups rewritten in place, nothing embedded; their points count in `upserts`. */
  groupUpdates = 0;
  /** The run was stopped (its signal aborted) before the sync was through; documents it did not reach were not pruned. */
  interrupted = false;
  /** Documents listed but left for the next run because the run was stopped: nothing of them was written. */
  abandoned = 0;
  readonly failures: IngestFailure[] = [];
  /** Set when the prune guard kept the documents the listing lost: the listing was empty or lost too many. */
  pruneRefused: PruneRefusal | undefined;
  /**
   * Documents the index holds as restricted that the run left as they were, instead of making them
   * public, because the folder has no access file (RAG_ACCESS_WOULD_PUBLISH; --allow-publish publishes them).
   */
  readonly keptRestricted: string[] = [];
  /** HTML pages that are nearly all links (tables of contents, indexes), and those of them indexed without their links (INGEST_LINK_PAGES=light). */
  readonly linkLists = { pages: 0, withoutLinks: 0 };
  /** Documents listed that belong to the other shares of a sharded run (`shard`): neither synced nor counted in `files`. */
  otherShards = 0;
  /** Chunk contexts (CONTEXT_MODE=llm): failed ones count in `errors`; failed and deferred ones are asked again next run. */
  readonly contexts = { written: 0, cached: 0, failed: 0, deferred: 0, promptTokens: 0, completionTokens: 0 };

  /** Custom metadata keys left out (an invalid name, or past the cap per document; custom-metadata-keys.ts), by document. */
  readonly ignoredMetaKeys: Array<{ uri: string; keys: readonly string[] }> = [];

  /** The share of the listing this run synced (--shard, INGEST_SHARDS), or undefined for the whole listing. */
  constructor(readonly shard?: Shard | undefined) {}

  get skipped(): number {
    return this.unchanged + this.unsupported + this.skippedEntries;
  }

  /** Documents that failed, plus chunks indexed without the context the gateway failed to write. */
  get errors(): number {
    return this.failures.length + this.contexts.failed;
  }

  /** The run's chunk contexts and the gateway tokens they cost, printed after the summary line in llm mode. */
  contextLine(): string {
    const { written, cached, failed, deferred, promptTokens, completionTokens } = this.contexts;
    return `contexts: ${written} written, ${cached} cached, ${failed} failed, ${deferred} deferred (token budget), ${promptTokens + completionTokens} tokens (${promptTokens} prompt + ${completionTokens} completion)`;
  }

  /** A sharded run's share, printed before the summary line: its `files` are this share's documents. */
  shardLine(): string | undefined {
    if (!this.shard) return undefined;
    const listed = this.files + this.otherShards;
    const pruning = this.shard.count > 1 ? '; pruning is left to one --prune-only run after every shard' : '';
    return `shard ${this.shard.index}/${this.shard.count}: ${this.files} of ${listed} listed documents${pruning}`;
  }

  /** The link lists of the run, printed before the summary line when there are any. */
  linkListLine(): string | undefined {
    const { pages, withoutLinks } = this.linkLists;
    if (pages === 0) return undefined;
    const how = withoutLinks === pages ? 'indexed without their links (INGEST_LINK_PAGES=full keeps them)' : 'indexed with their links';
    return `link lists: ${pages} ${pages === 1 ? 'page' : 'pages'} (tables of contents, indexes) ${how}`;
  }

  /** The custom metadata keys the run left out, printed before the summary line when there are any. */
  ignoredMetaKeysLine(): string | undefined {
    if (this.ignoredMetaKeys.length === 0) return undefined;
    const keys = [...new Set(this.ignoredMetaKeys.flatMap((entry) => entry.keys))];
    const shown = keys.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 60))).join(', ');
    return `metadata: ${keys.length} custom ${keys.length === 1 ? 'key' : 'keys'} ignored on ${this.ignoredMetaKeys.length} ${this.ignoredMetaKeys.length === 1 ? 'document' : 'documents'} (${shown}${keys.length > 5 ? ', …' : ''}): a key is letters, digits, _ and -, at most 100, and 32 keys a document`;
  }

  toLine(): string {
    return `done: ${this.files} files, ${this.chunks} chunks, ${this.upserts} upserts, ${this.deletes} deletes, ${this.skipped} skipped, ${this.errors} errors`;
  }
}

import { checkedShard, parseShard, RagError, type Config, type Shard } from '@rag/core';

export interface ShardFlags {
  shard?: string | undefined;
  shards?: string | undefined;
  'prune-only'?: boolean | undefined;
  'no-prune'?: boolean | undefined;
}

/**
 * The share of the listing this run syncs: `--shard INDEX/COUNT`, or `--shards COUNT` (INGEST_SHARDS) with
 * the index Kubernetes gives each pod of an Indexed Job in JOB_COMPLETION_INDEX
 * (https://kubernetes.io/docs/tasks/job/indexed-parallel-processing-static/). Undefined: the whole listing.
 * A --prune-only run needs the whole listing, so it refuses the flags and ignores the environment's share.
 */
export function shardOption(flags: ShardFlags, config: Pick<Config, 'INGEST_SHARDS' | 'JOB_COMPLETION_INDEX'>): Shard | undefined {
  if (flags['prune-only']) {
    if (flags.shard !== undefined || flags.shards !== undefined) throw new RagError('RAG_CONFIG_INVALID', '--prune-only lists the whole source: it takes no --shard or --shards.');
    if (flags['no-prune']) throw new RagError('RAG_CONFIG_INVALID', '--prune-only and --no-prune contradict each other.');
    return undefined;
  }
  if (flags.shard !== undefined) return parseShard(flags.shard);
  const count = flags.shards !== undefined ? Number(flags.shards) : config.INGEST_SHARDS;
  if (count === undefined) return undefined;
  const origin = flags.shards !== undefined ? `--shards ${flags.shards}` : `INGEST_SHARDS=${count}`;
  if (config.JOB_COMPLETION_INDEX === undefined) {
    throw new RagError('RAG_CONFIG_INVALID', `${origin} needs the index of this worker: JOB_COMPLETION_INDEX (Kubernetes sets it in each pod of an Indexed Job), or --shard INDEX/COUNT.`);
  }
  return checkedShard(config.JOB_COMPLETION_INDEX, count, `${origin} with JOB_COMPLETION_INDEX=${config.JOB_COMPLETION_INDEX}`);
}

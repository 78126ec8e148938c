import { createHash } from 'node:crypto';
import { RagError } from '../errors.ts';

/** One share of a listing split across `count` workers (a Kubernetes Indexed Job's completions): `index` from 0. */
export interface Shard {
  index: number;
  count: number;
}

/**
 * The share a document belongs to: the first 32 bits of the SHA-256 of its uri, modulo the number of
 * shares. It depends on the uri alone, so a document stays in its share when others are added or
 * removed, and every worker computes the same split from its own listing with no coordination.
 */
export function shardIndexOf(uri: string, count: number): number {
  return createHash('sha256').update(uri).digest().readUInt32BE(0) % count;
}

export function inShard(uri: string, shard: Shard): boolean {
  return shardIndexOf(uri, shard.count) === shard.index;
}

/** `--shard 2/4`: the third of four shares. */
export function parseShard(text: string): Shard {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!match) throw new RagError('RAG_CONFIG_INVALID', `--shard "${text}": expected INDEX/COUNT, e.g. 0/4 (index from 0).`);
  return checkedShard(Number(match[1]), Number(match[2]), `--shard ${text}`);
}

export function checkedShard(index: number, count: number, origin: string): Shard {
  if (!Number.isSafeInteger(count) || count < 1) throw new RagError('RAG_CONFIG_INVALID', `${origin}: the number of shards must be 1 or more.`);
  if (!Number.isSafeInteger(index) || index < 0 || index >= count) throw new RagError('RAG_CONFIG_INVALID', `${origin}: the shard index must be from 0 to ${count - 1}.`);
  return { index, count };
}

import type { Config } from '../config.ts';
import type { ChunkOptions } from './index-document.ts';

/** The chunker's settings as the environment gives them (CHUNK_SIZE, CHUNK_OVERLAP, CHUNK_MIN_CHARS). */
export function chunkOptionsOf(config: Pick<Config, 'CHUNK_SIZE' | 'CHUNK_OVERLAP' | 'CHUNK_MIN_CHARS'>): ChunkOptions {
  return { chunkSize: config.CHUNK_SIZE, chunkOverlap: config.CHUNK_OVERLAP, minChars: config.CHUNK_MIN_CHARS };
}

import murmurhash from 'murmurhash';

const utf8 = new TextEncoder();

/**
 * fastembed's token id: `abs(mmh3.hash(token))`, MurmurHash3 x86_32 of the UTF-8 bytes, seed 0,
 * read as a signed int32. A hash of -2^31 gives 2147483648 (still a valid Qdrant u32 index).
 * https://github.com/qdrant/fastembed/blob/main/fastembed/sparse/bm25.py (`compute_token_id`)
 */
export function bm25TokenId(stem: string): number {
  const unsigned = murmurhash.v3(utf8.encode(stem), 0);
  return Math.abs(unsigned | 0);
}

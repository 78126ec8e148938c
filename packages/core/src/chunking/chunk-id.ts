import { parse as parseUuid, v5 as uuidv5 } from 'uuid';

/** Parsed once: given as a string, uuid parses the namespace again on every call. */
const URL_NAMESPACE = parseUuid(uuidv5.URL);

/** uuid5(NAMESPACE_URL, "<source>#<chunk_index>"): the Python pipeline's point id, so re-ingesting overwrites. */
export function chunkId(source: string, chunkIndex: number): string {
  // As UTF-8 bytes from Buffer rather than uuid's own string-to-bytes loop, the hot part of a no-op re-run.
  return uuidv5(Buffer.from(`${source}#${chunkIndex}`, 'utf8'), URL_NAMESPACE);
}

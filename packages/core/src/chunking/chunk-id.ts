import { v5 as uuidv5 } from 'uuid';

/** uuid5(NAMESPACE_URL, "<source>#<chunk_index>"): the Python pipeline's point id, so re-ingesting overwrites. */
export function chunkId(source: string, chunkIndex: number): string {
  return uuidv5(`${source}#${chunkIndex}`, uuidv5.URL);
}

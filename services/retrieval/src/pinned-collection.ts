import { QdrantAliases, type Config, type Logger } from '@rag/core';

/**
 * The configuration with QDRANT_COLLECTION resolved when it names a Qdrant alias: the API opens the
 * collection the alias points to at start and keeps it, with the embedding model locked to it, when the
 * alias moves (k8s/scripts/flip-alias.ts). A model change is then an alias flip followed by a rollout of
 * the API with the new model: old pods answer from the old collection, new pods from the new one, and no
 * answer mixes the two. Qdrant unreachable at start: the name is used as it is (resolved by Qdrant on
 * each request), said in the log.
 */
export async function withPinnedCollection(config: Config, logger: Logger): Promise<Config> {
  if (!config.QDRANT_URL) return config;
  try {
    const collection = await new QdrantAliases({ url: config.QDRANT_URL, apiKey: config.QDRANT_API_KEY }).pin(config.collection);
    if (collection !== config.collection) logger.info({ alias: config.collection, collection }, `QDRANT_COLLECTION ${config.collection} is an alias of ${collection}: this process answers from ${collection} until it restarts.`);
    return { ...config, collection };
  } catch (error) {
    logger.warn({ reason: (error as Error).message }, `Cannot resolve QDRANT_COLLECTION ${config.collection} at start (Qdrant unreachable): used as named; if it is an alias, a flip reaches this process before its restart.`);
    return config;
  }
}

/**
 * Points the collection alias the API and the ingest job use (QDRANT_COLLECTION, e.g. `docs`) at another
 * collection, in one atomic Qdrant call, and prints how to undo it:
 *
 *   QDRANT_URL=http://localhost:6333 QDRANT_API_KEY=… pnpm exec tsx k8s/scripts/flip-alias.ts --alias docs --to docs-v3
 *   alias docs: docs-v2 → docs-v3 (roll back: --to docs-v2)
 *
 * Running API pods keep the collection they opened (services/retrieval/src/pinned-collection.ts); a
 * rollout with the new model's EMBED_URL and EMBED_MODEL moves them. Runbook: "Changing the embedding model".
 */
import { parseArgs } from 'node:util';
import { QdrantAliases } from '@rag/core';

export async function flipAlias(url: string, apiKey: string | undefined, alias: string, to: string): Promise<string> {
  const previous = await new QdrantAliases({ url, apiKey }).flip(alias, to);
  return `alias ${alias}: ${previous ?? '(none)'} → ${to}${previous ? ` (roll back: --to ${previous})` : ''}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { alias: { type: 'string' }, to: { type: 'string' } } });
  const url = process.env.QDRANT_URL;
  if (!url || !values.alias || !values.to) throw new Error('usage: QDRANT_URL=… [QDRANT_API_KEY=…] flip-alias.ts --alias NAME --to COLLECTION');
  process.stdout.write(`${await flipAlias(url, process.env.QDRANT_API_KEY, values.alias, values.to)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  });
}

/**
 * What the English analyzer (fastembed's: English stopwords, Snowball English) costs on a French
 * corpus. Scores the golden set's chunks in memory with the exact BM25 of the pipeline (fastembed term
 * weights, Qdrant IDF) under three analyzers, so only the analyzer changes:
 *   pipeline         bm25Stems, what the index really uses
 *   +fr-stopwords    the same, French stopwords dropped first
 *   fr-light         French stopwords dropped, accents folded, plural -s/-x stripped, no English stemmer
 * A measurement for the report, not a retrieval mode: `tsx eval/src/french-ablation.ts eval/golden/nimbus-faq.yaml`.
 */

import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bm25Stems, chunkMarkdown } from '@rag/core';
import { LocalDirectorySource } from '@rag/core/ingestion';
import { loadGoldenSet } from './golden-set.ts';
import { firstHitRank, rankMetrics } from './metrics.ts';

/** Function words of French (articles, pronouns, prepositions, auxiliaries), after NLTK's French list. */
export const FRENCH_STOPWORDS = new Set(
  `au aux avec ce ces dans de des du elle en et eux il ils je la le les leur lui ma mais me même mes moi mon ne nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un une vos votre vous c d j l à m n s t y été être avoir ai as a avons avez ont est sont suis es sommes êtes fait faire peut peux puis quand comment combien quel quelle quels quelles où si est-ce ça cela ceci tout tous toute toutes plus moins très aussi bien`.split(/\s+/),
);

type Analyzer = (text: string) => string[];

const fold = (word: string) => word.normalize('NFD').replace(/\p{M}/gu, '');
const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];

export const ANALYZERS: Record<string, Analyzer> = {
  pipeline: bm25Stems,
  '+fr-stopwords': (text) => bm25Stems(words(text).filter((word) => !FRENCH_STOPWORDS.has(word)).join(' ')),
  'fr-light': (text) =>
    words(text)
      .filter((word) => !FRENCH_STOPWORDS.has(word))
      .map((word) => fold(word).replace(/(?<=\w{3})[sx]$/, '')),
};

const K = 1.2;
const B = 0.75;
const AVG_LEN = 256;

function bm25Ranking(analyzer: Analyzer, chunks: Array<{ source: string; text: string }>) {
  const documents = chunks.map((chunk) => {
    const terms = analyzer(chunk.text);
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    return { chunk, length: terms.length, counts };
  });
  const frequency = new Map<string, number>();
  for (const document of documents) for (const term of document.counts.keys()) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  const idf = (term: string) => {
    const n = frequency.get(term) ?? 0;
    return Math.log((documents.length - n + 0.5) / (n + 0.5) + 1);
  };
  return (question: string) =>
    documents
      .map((document) => {
        let score = 0;
        for (const term of new Set(analyzer(question))) {
          const tf = document.counts.get(term) ?? 0;
          if (tf > 0) score += idf(term) * ((tf * (K + 1)) / (tf + K * (1 - B + (B * document.length) / AVG_LEN)));
        }
        return { ...document.chunk, score };
      })
      .filter((hit) => hit.score > 0)
      .sort((a, b) => b.score - a.score);
}

async function main(file: string): Promise<void> {
  const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
  const set = await loadGoldenSet(resolve(file), repositoryRoot);
  if (!set.corpus) throw new Error(`${file} names no corpus`);
  const chunks: Array<{ source: string; text: string }> = [];
  for await (const document of new LocalDirectorySource(set.corpus.root, set.corpus.include ? { include: set.corpus.include } : {}).list()) {
    if (!/\.(md|markdown)$/.test(document.uri)) continue;
    chunks.push(...chunkMarkdown((await document.read()).toString('utf8'), document.uri, { chunkSize: 1200, chunkOverlap: 200 }));
  }
  process.stdout.write('| analyzer | hit@1 | hit@5 | MRR@10 | in-scope questions whose terms all miss the index |\n| --- | --- | --- | --- | --- |\n');
  for (const [name, analyzer] of Object.entries(ANALYZERS)) {
    const rank = bm25Ranking(analyzer, chunks);
    const inScope = set.questions.filter((question) => question.expectedSource !== undefined);
    const ranks = inScope.map((question) =>
      firstHitRank(rank(question.question).slice(0, 10), { expectedSource: question.expectedSource!, expectedSubstring: question.expectedSubstring }),
    );
    const empty = inScope.filter((question) => rank(question.question).length === 0).length;
    const metrics = rankMetrics(ranks);
    process.stdout.write(`| ${name} | ${metrics.hitAt1.toFixed(3)} | ${metrics.hitAt5.toFixed(3)} | ${metrics.mrr.toFixed(3)} | ${empty} |\n`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main(process.argv[2] ?? 'eval/golden/nimbus-faq.yaml').catch((error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  });
}


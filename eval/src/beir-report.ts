import type { BeirResult } from './beir.ts';

/** Published SciFact nDCG@10 (BEIR paper and the corpora README), to read ours against. */
const PUBLISHED: Array<[string, string]> = [
  ['BM25 (BEIR paper, Elasticsearch)', '0.665'],
  ['BM25 (Pyserini flat)', '0.679'],
  ['Qdrant BM25 + MiniLM, RRF', '0.718'],
  ['bge-base-en-v1.5 (dense)', '0.741'],
];

export function beirMarkdown(result: BeirResult, indexSeconds: number | undefined, notes: string | undefined): string {
  const lines = [
    `# BEIR evaluation: ${result.dataset}`,
    '',
    `Retrieved through ${result.backend}. ${result.documents} documents indexed as ${result.chunks} chunks (title as \`#\` heading + text, source = document id); ${result.queries} test queries; documents ranked by their best chunk.${indexSeconds === undefined ? '' : ` Indexing took ${indexSeconds.toFixed(0)} s.`}`,
    '',
    '| metric | ours |',
    '| --- | --- |',
    `| nDCG@10 | **${result.ndcgAt10.toFixed(3)}** |`,
    `| Recall@100 | **${result.recallAt100.toFixed(3)}** |`,
    '',
    'Published nDCG@10 on the same test queries:',
    '',
    '| system | nDCG@10 |',
    '| --- | --- |',
    ...PUBLISHED.map(([system, value]) => `| ${system} | ${value} |`),
    '',
    ...(notes ? ['## Findings', '', notes.trim(), ''] : []),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}

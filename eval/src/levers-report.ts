import type { RankMetrics } from './metrics.ts';
import type { LeverCell, Rung } from './levers.ts';

/** The lever ladder as Markdown: one table per set, a row per rung; hand-written notes appended verbatim. */

const KINDS = ['identifier', 'paraphrase', 'task'] as const;
const fixed = (value: number | undefined, digits = 3) => (value === undefined ? '—' : value.toFixed(digits));
const pair = (metrics: RankMetrics | undefined) => (metrics ? `${fixed(metrics.hitAt1, 2)} / ${fixed(metrics.hitAt5, 2)}` : '—');

function row(rung: Rung, cell: LeverCell): string {
  const { result } = cell;
  const all = `${fixed(result.inScope.hitAt1)} / ${fixed(result.inScope.hitAt5)} / ${fixed(result.inScope.mrr)}`;
  const kinds = KINDS.map((kind) => pair(result.byKind[kind]));
  const coverage = fixed(result.thresholds.coverageAuroc, 2);
  return `| ${rung.name} | ${all} | ${kinds.join(' | ')} | ${pair(result.documentLevel)} | ${coverage} | ${cell.chunks} | ${cell.indexSeconds.toFixed(1)} | ${cell.searchP50Ms.toFixed(1)} |`;
}

function questionCounts(cell: LeverCell): string {
  const kinds = KINDS.filter((kind) => cell.result.byKind[kind]).map((kind) => `${cell.result.byKind[kind]!.questions} ${kind}`);
  return `${cell.result.inScope.questions} in-scope questions (${kinds.join(', ')}), ${cell.result.outOfScopeTopScores.length} out of scope`;
}

export function leversMarkdown(rungs: readonly Rung[], cells: readonly LeverCell[], notes: string | undefined): string {
  const sets = [...new Set(cells.map((cell) => cell.set))];
  const lines = [
    '# Lever ladder: the answering passage for questions in the user\'s words',
    '',
    'Each set indexed afresh for each rung through the product\'s own pipeline (`pnpm eval:levers`), embedded store, no reranker, every question asked once. ' +
      'A hit is a passage of the expected page holding the expected substring; "page" ignores the substring. Cells are hit@1 / hit@5 (and MRR@10 for all). ' +
      'OOS AUROC: how well the best passage\'s query coverage (the /chat rule without a model) separates in-scope from out-of-scope questions. ' +
      'index s: seconds to convert, chunk, embed and store the set; p50 ms: median time of one search, on this 2-core machine.',
    '',
    '| rung | what it changes |',
    '| --- | --- |',
    ...rungs.map((rung) => `| ${rung.name} | ${rung.description} |`),
  ];
  for (const set of sets) {
    const setCells = cells.filter((cell) => cell.set === set);
    lines.push('', `## ${set}`, '', `${questionCounts(setCells[0]!)}.`, '');
    lines.push('| rung | all: hit@1 / hit@5 / MRR | identifier | paraphrase | task | page | OOS AUROC | chunks | index s | p50 ms |');
    lines.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const rung of rungs) {
      const cell = setCells.find((candidate) => candidate.rung === rung.name);
      if (cell) lines.push(row(rung, cell));
    }
  }
  if (notes) lines.push('', notes.trim());
  return `${lines.join('\n')}\n`;
}

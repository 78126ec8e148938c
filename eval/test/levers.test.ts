import { resolve } from 'node:path';
import { createLogger, loadConfig } from '@rag/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSets, median, runCell, type LeverCell, type Rung } from '../src/levers.ts';
import { leversMarkdown } from '../src/levers-report.ts';

const repository = resolve(import.meta.dirname, '../..');
const rungs: Rung[] = [
  { name: 'seed chunks', description: 'seed boundaries', settings: { CHUNK_MIN_CHARS: 0 } },
  { name: 'merged', description: 'small pieces merged', settings: { CHUNK_MIN_CHARS: 400 } },
];

let cells: LeverCell[];

beforeAll(async () => {
  const [set] = await loadSets([resolve(import.meta.dirname, 'fixtures/mini.yaml')], repository);
  const config = loadConfig({});
  cells = [];
  for (const rung of rungs) cells.push(await runCell(rung, set!, config, createLogger('silent')));
});

describe('a rung of the lever ladder', () => {
  it('indexes the set afresh with its own settings', () => {
    // The fixture's three pages hold six sections, each under 400 characters: merged, each page is one chunk.
    expect(cells.map((cell) => cell.chunks)).toEqual([6, 3]);
  });

  it('records the rank of every in-scope question and what the rung costs', () => {
    for (const cell of cells) {
      expect(cell.result.ranks).toHaveLength(4);
      expect(cell.result.inScope.questions).toBe(4);
      expect(cell.indexSeconds).toBeGreaterThan(0);
      expect(cell.searchP50Ms).toBeGreaterThan(0);
    }
    expect(cells[0]!.result.ranks).toEqual([1, 1, 1, 1]);
  });

  it('renders one row per rung under its set, with the notes after the tables', () => {
    const markdown = leversMarkdown(rungs, cells, 'Notes: why the default.');
    const rows = markdown.split('\n').filter((line) => line.startsWith('| seed chunks |') || line.startsWith('| merged |'));
    expect(rows).toHaveLength(4); // two in the rung legend, two in the set's table
    expect(markdown).toContain('## mini');
    expect(markdown).toContain('| seed chunks | 1.000 / 1.000 / 1.000 |');
    expect(markdown.trimEnd().endsWith('Notes: why the default.')).toBe(true);
  });
});

describe('median', () => {
  it('is the middle value, or the mean of the two middle values', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBe(0);
  });
});

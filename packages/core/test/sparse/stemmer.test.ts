import { readFileSync } from 'node:fs';
import { stem } from 'porter2';
import { describe, expect, it } from 'vitest';

const lines = readFileSync(new URL('../fixtures/bm25/english_stems_golden.tsv', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.length > 0);

describe('porter2 stems like fastembed (rust-stemmers 1.2.0 English)', () => {
  it('covers every corpus token of english_stems_golden.tsv', () => {
    expect(lines).toHaveLength(47_578);
  });

  it('gives the golden stem for every word', () => {
    const mismatches: string[] = [];
    for (const line of lines) {
      const [word = '', expected = ''] = line.split('\t');
      const actual = stem(word);
      if (actual !== expected) mismatches.push(`${word}: ${actual} != ${expected}`);
    }
    expect(mismatches).toEqual([]);
  });
});

/**
 * eval/golden/freshness.yaml stays measurable: every corpus page has an age, every question's pages exist, and in
 * each two-version pair the expected page is the newer one (the eval sets modified times from these ages).
 */
import { readdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const repository = resolve(import.meta.dirname, '../..');

describe('the freshness golden set', () => {
  it('dates every page and expects the newer of each pair', async () => {
    const set = parse(await readFile(resolve(repository, 'eval/golden/freshness.yaml'), 'utf8')) as {
      corpus: string;
      modified: Record<string, number>;
      questions: Array<{ expected_source: string; stale_source?: string }>;
    };
    const pages = (await readdir(resolve(repository, set.corpus))).sort();
    expect(Object.keys(set.modified).sort()).toEqual(pages);
    for (const { expected_source: newer, stale_source: stale } of set.questions) {
      expect(pages).toContain(newer);
      if (stale === undefined) continue;
      expect(pages).toContain(stale);
      expect(set.modified[newer]!, `${newer} must be newer than ${stale}`).toBeLessThan(set.modified[stale]!);
    }
    expect(set.questions.filter((question) => question.stale_source !== undefined).length).toBeGreaterThanOrEqual(10);
  });
});

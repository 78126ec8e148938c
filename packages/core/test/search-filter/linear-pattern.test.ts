/**
 * Search filter patterns run in linear time (issue 32, High 1): a backtracking regular expression held /search 12.7 s
 * on the 17-character title pattern `*?*?*?*?*?*?*?*?!` against one 52-character title, and the cost of such a
 * pattern grows combinatorially with its length. The patterns keep picomatch's meaning for sources.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { documentMatcher, sourceGlobMatcher, titlePatternMatcher } from '../../src/search-filter/filter-match.ts';
import { isEmptyFilter, parseSearchControls, toSearchFilter } from '../../src/search-filter/search-controls.ts';
import { RagError } from '../../src/errors.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const FILTER_MATCH = fileURLToPath(new URL('../../src/search-filter/filter-match.ts', import.meta.url));

/**
 * Runs the matchers on hostile inputs in a child process, killed after `timeoutMs`: a synchronous backtracking match
 * blocks the event loop, so vitest's own timeout could never interrupt it in-process.
 */
function matchInChild(script: string, timeoutMs: number): Promise<string> {
  const code = `import { sourceGlobMatcher, titlePatternMatcher } from ${JSON.stringify(FILTER_MATCH)};\n${script}`;
  return new Promise((resolve, reject) => {
    execFile('pnpm', ['exec', 'tsx', '--eval', code], { cwd: REPO_ROOT, timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) =>
      error ? reject(new Error(`the match did not finish in ${timeoutMs} ms (${error.message}) ${stderr}`)) : resolve(stdout.trim()),
    );
  });
}

/** Paths the source globs are compared on: nested folders, dotfiles, a path one `/` away from a one-folder name (docsxa.md, docs/a.md), literal extglob characters. */
const PATHS = ['docs', 'docs/a.md', 'docs/a*.md', 'docs/.hidden/x.md', 'docs/operator-manual/x/y.pdf', 'docs/user-guide/b.md', 'docs/b.md', 'docsxa.md', 'docs/o.md', 'hr/a.pdf', 'hr/c.pdf', 'a.md', 'x.md', 'aba.md', 'axc/x.md', 'legacy/notes.md', 'ops/guide.txt', 'ops/sub/guide.md', 'a/a.md', 'b/q.md', 'a/b/x.md', 'a/c/x.md', 'a/c/e/x.md', 'a/b/c/x.md', '!(docs)/a.md', '(docs)/a.md', 'gs://bucket/reports/q3/summary.pdf', 'gs://bucket/other.pdf'];

describe('title patterns and source globs in linear time', () => {
  it('answers hostile patterns against 5,000-character texts (a backtracking engine would take hours)', async () => {
    // 149 `*?` pairs then a character the title lacks: with backtracking, every way of splitting the title between the
    // stars is tried before failing; RE2's automaton walks the title once per pattern state.
    const output = await matchInChild(
      [
        `const title = 'a'.repeat(5000);`,
        `const probe = titlePatternMatcher('*?*?*?*?*?*?*?*?!')('Argo CD rollback and recovery runbook for operators!!');`,
        `const hostileTitle = titlePatternMatcher('*?'.repeat(149) + '!')(title);`,
        `const hostileSource = sourceGlobMatcher('*a'.repeat(100) + 'b')(title);`,
        `const deepSource = sourceGlobMatcher('**/'.repeat(100) + 'x.md')('a/'.repeat(2000) + 'y.md');`,
        `console.log(JSON.stringify([probe, hostileTitle, hostileSource, deepSource]));`,
      ].join('\n'),
      30_000,
    );
    expect(JSON.parse(output)).toEqual([true, false, false, false]);
  }, 40_000);

  it.each([
    'docs/**',
    'docs/*',
    'docs/operator-manual/**',
    '**/*.md',
    'hr/{a,b}.*',
    '**/faq.*',
    '{legacy,ops}/*.{md,txt}',
    'docs/**/b.md',
    '[ab]/*.md',
    'docs/[^o]*.md',
    '!docs/**',
    '?.md',
    'a/{b,c/{d,e}}/*.md',
    'docs/a\\*.md',
    'gs://bucket/reports/**',
    // `?` and a negated class are one character but `/`: these must not cross into docs/a.md or a/a.md.
    'docs?a.md',
    'a?a.md',
    'docs[^o]a.md',
    'a[^b]c/x.md',
    '*?a.md',
  ])('matches as picomatch (dot: true) does: %s', (glob) => {
    const reference = picomatch(glob, { dot: true });
    const linear = sourceGlobMatcher(glob)!;
    expect(PATHS.filter((path) => linear(path))).toEqual(PATHS.filter((path) => reference(path)));
  });

  it.each([
    ['!(docs)/**', ['!(docs)/a.md']],
    ['!(docs)/*.md', ['!(docs)/a.md']],
    ['!(*.md)', []],
  ])('reads an extglob `!(…)` literally, never as a negation, so it matches no path picomatch refuses: %s', (glob, literal) => {
    // picomatch reads `!(docs)` as "anything but docs"; extglobs are not supported here, and a leading `!(` is not the
    // leading `!` that negates the whole glob (which would let docs/a.md through, a path picomatch refuses).
    const reference = picomatch(glob, { dot: true });
    const matched = PATHS.filter((path) => sourceGlobMatcher(glob)!(path));
    expect(matched).toEqual(literal);
    expect(matched.filter((path) => !reference(path))).toEqual([]);
  });

  it('reads `[!x]` as `[^x]` (as bash does; picomatch reads it literally) and a star before `/**` as picomatch reads `d?/**`', () => {
    expect(sourceGlobMatcher('docs/[!o]*.md')!('docs/a.md')).toBe(true);
    expect(sourceGlobMatcher('docs/[!o]*.md')!('docs/o.md')).toBe(false);
    // Like `[^o]`, never across a folder: `[!o]` is one character but `/`.
    expect(sourceGlobMatcher('docs[!o]a.md')!('docsxa.md')).toBe(true);
    expect(sourceGlobMatcher('docs[!o]a.md')!('docs/a.md')).toBe(false);
    expect(sourceGlobMatcher('a[!b]c/x.md')!('axc/x.md')).toBe(true);
    expect(sourceGlobMatcher('a[!b]c/x.md')!('a/c/x.md')).toBe(false);
    expect(sourceGlobMatcher('docs/a*/**')!('docs/ab')).toBe(true);
  });

  it('reads title patterns case-insensitively, `*` across slashes, `?` one character, regex characters literally', () => {
    expect(titlePatternMatcher('*ci/cd*')!('Our CI/CD notes')).toBe(true);
    expect(titlePatternMatcher('team ?andbook')!('Team Handbook')).toBe(true);
    expect(titlePatternMatcher('team ?andbook')!('Team  Handbook')).toBe(false);
    expect(titlePatternMatcher('a+b (c).*')!('A+B (C).md')).toBe(true);
    expect(titlePatternMatcher('a+b (c).*')!('AAB (C)xmd')).toBe(false);
    expect(titlePatternMatcher('*runbook')!('Runbook\nsecond line runbook')).toBe(true);
  });

  it('refuses a glob the engine cannot compile with RAG_INVALID_FILTER naming the field', () => {
    const refusal = (() => {
      try {
        parseSearchControls({ filter: { source: 'docs/[z-a].md' } });
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(RagError);
    expect((refusal as RagError).code).toBe('RAG_INVALID_FILTER');
    expect((refusal as RagError).message).toContain('filter.source');
  });

  it('drops a match-all source glob (`**`): no source condition, so the store lists no sources for it', () => {
    expect(toSearchFilter({ source: '**' }).source).toBeUndefined();
    expect(toSearchFilter({ source: '**/**' }).source).toBeUndefined();
    expect(isEmptyFilter(toSearchFilter({ source: '**' }))).toBe(true);
    // `*` stays: it matches top-level files only.
    expect(toSearchFilter({ source: '*' }).source).toBe('*');
  });
});

describe('documentMatcher dates', () => {
  const at = (modifiedAt: number) => ({ type: 'md', modifiedAt, meta: {} });
  it('keeps modified_after inclusive and modified_before exclusive at the exact second', () => {
    const filter = toSearchFilter({ modified_after: '2026-01-01T00:00:00Z', modified_before: '2026-06-01T00:00:00Z' });
    const matches = documentMatcher(filter);
    expect(matches('a.md', at(filter.modifiedAfter!))).toBe(true);
    expect(matches('a.md', at(filter.modifiedBefore!))).toBe(false);
    expect(matches('a.md', at(filter.modifiedBefore! - 1))).toBe(true);
    expect(matches('a.md', at(filter.modifiedAfter! - 1))).toBe(false);
  });
});

/**
 * The committed per-language goldens (../fixtures/bm25-languages/) are what the reference makes today: the
 * generator (packages/core/scripts/bm25-language-goldens.py) runs fastembed's own Bm25 with py-rust-stemmers and
 * wordfreq as pinned in scripts/python/bm25-reference.txt, and every file must come out byte for byte the same. So the
 * fast test (bm25-languages.test.ts) compares our encoder with fastembed's stemmer, not with a stale copy.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { realComponentSkipReason, repositoryRoot, venvPython } from '../real/real-components.ts';

const SUITE = 'bm25-languages.real.test.ts';
const python = venvPython('bm25-reference');
const seeds = join(repositoryRoot, '..', 'shared', 'seeds');
const skipReason = realComponentSkipReason(
  SUITE,
  !python ? 'the bm25-reference Python environment (scripts/python-env.sh bm25-reference) is missing' : existsSync(seeds) ? undefined : `${seeds} is missing`,
);
const committed = join(repositoryRoot, 'packages', 'core', 'test', 'fixtures', 'bm25-languages');
const folders: string[] = [];

afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

describe.skipIf(skipReason !== undefined)('BM25 language goldens regenerate from py-rust-stemmers', () => {
  it('gives the committed files, byte for byte', async () => {
    const out = await mkdtemp(join(tmpdir(), 'rag-bm25-goldens-'));
    folders.push(out);
    await promisify(execFile)(python!, [join(repositoryRoot, 'packages', 'core', 'scripts', 'bm25-language-goldens.py'), out], { timeout: 300_000 });
    const names = (await readdir(committed)).sort();
    expect((await readdir(out)).sort()).toEqual(names);
    for (const name of names) {
      expect((await readFile(join(out, name), 'utf8')) === (await readFile(join(committed, name), 'utf8')), name).toBe(true);
    }
  }, 360_000);
});

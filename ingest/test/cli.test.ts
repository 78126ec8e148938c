import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeGcsServer } from '../../packages/core/test/ingest/fake-gcs-server.ts';
import { corruptPdf } from '../../packages/core/test/ingest/fixture-documents.ts';
import { guide, makeCorpus } from '../../packages/core/test/ingest/fixture-folder.ts';
import { runIngestCli, type CliRun } from './ingest-cli.ts';


let dataDir: string;
let corpus: Awaited<ReturnType<typeof makeCorpus>>;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-cli-data-'));
  corpus = await makeCorpus();
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await corpus.remove();
});

function ingestCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runIngestCli(dataDir, args, env);
}

function searchViewFile(): string {
  return join(dataDir, 'lancedb', 'docs-v2.search-view');
}

describe('pnpm ingest', () => {
  it('exits 1 with E = 1 for a corrupt file, indexes the rest, and re-runs as a no-op', async () => {
    await writeFile(join(corpus.folder, 'broken.pdf'), corruptPdf());

    const first = await ingestCli([corpus.folder]);

    expect(first.code, first.stderr).toBe(1);
    expect(first.lastLine).toMatch(/^done: 7 files, (\d+) chunks, \1 upserts, 0 deletes, 1 skipped, 1 errors$/);
    expect(first.stderr).toContain('failed: broken.pdf: The document could not be converted to text. (not a readable PDF');
    // What the server loads at start instead of scanning the table.
    const savedAt = (await stat(searchViewFile())).mtimeMs;
    expect(existsSync(join(dataDir, 'lancedb', 'docs-v2.writing')), 'the writing mark goes when the run ends').toBe(false);

    await rm(join(corpus.folder, 'broken.pdf'));
    const rerun = await ingestCli([corpus.folder]);

    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.lastLine).toBe('done: 6 files, 0 chunks, 0 upserts, 0 deletes, 6 skipped, 0 errors');
    expect((await stat(searchViewFile())).mtimeMs, 'a run that changed nothing leaves the saved view as it was').toBe(savedAt);
  });

  it('finishes its sync with exit 0 when the search view cannot be saved, and says servers will scan instead', async () => {
    expect((await ingestCli([corpus.folder])).code).toBe(0);
    await rm(searchViewFile());
    await mkdir(searchViewFile()); // nothing can be renamed over a folder
    await writeFile(join(corpus.folder, 'guide.md'), guide(3, 'edited'));

    const rerun = await ingestCli([corpus.folder]);

    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.lastLine).toMatch(/^done: 6 files, [1-9]\d* chunks, [1-9]\d* upserts, \d+ deletes, 5 skipped, 0 errors$/);
    expect(rerun.stderr).toContain('search view not saved: servers will build it from the table');
  });

  it('lists each document with its chunk count in a dry run and writes nothing', async () => {
    const dryRun = await ingestCli([corpus.folder, '--dry-run']);

    expect(dryRun.code, dryRun.stderr).toBe(0);
    const planned = dryRun.stdout.trimEnd().split('\n').slice(0, -1);
    expect(planned.map((line) => line.split('\t')[1]).sort()).toEqual(['guide.md', 'handbook.docx', 'report.pdf', 'roadmap.pptx', 'status.html']);
    expect(dryRun.lastLine).toMatch(/^done: 6 files, \d+ chunks, 0 upserts, 0 deletes, 1 skipped, 0 errors$/);
    expect(existsSync(join(dataDir, 'lancedb', 'docs-v2.lance')), 'a dry run must not create the collection').toBe(false);
    expect(existsSync(searchViewFile()), 'nor save a search view').toBe(false);

    const realRun = await ingestCli([corpus.folder]);
    expect(realRun.lastLine).toMatch(/^done: 6 files, (\d+) chunks, \1 upserts, 0 deletes, 1 skipped, 0 errors$/);

    // Over an existing index too, a dry run writes nothing: not even the search view it finds missing.
    await rm(searchViewFile());
    expect((await ingestCli([corpus.folder, '--dry-run'])).code).toBe(0);
    expect(existsSync(searchViewFile())).toBe(false);
  });

  it('ingests gs://bucket/prefix, and GCS_BUCKET + GCS_PREFIX when no source is given', async () => {
    const gcs = await new FakeGcsServer('team-docs', 2).start();
    try {
      for (let index = 1; index <= 3; index += 1) gcs.put(`handbook/guide-${index}.md`, guide(2, `edition${index}`));
      gcs.put('handbook/notes.txt', 'unsupported');
      const emulator = { STORAGE_EMULATOR_HOST: gcs.baseUrl };

      const byUri = await ingestCli(['gs://team-docs/handbook/'], emulator);

      expect(byUri.code, byUri.stderr).toBe(0);
      expect(byUri.lastLine).toMatch(/^done: 4 files, (\d+) chunks, \1 upserts, 0 deletes, 1 skipped, 0 errors$/);
      gcs.requests.length = 0;

      const byConfig = await ingestCli([], { ...emulator, GCS_BUCKET: 'team-docs', GCS_PREFIX: 'handbook/' });

      expect(byConfig.lastLine).toBe('done: 4 files, 0 chunks, 0 upserts, 0 deletes, 4 skipped, 0 errors');
      expect(gcs.downloads()).toEqual([]);
      expect(gcs.lists().map((request) => request.query.get('prefix'))).toEqual(['handbook/', 'handbook/']);
    } finally {
      await gcs.close();
    }
  });

  it('says what to do when given no source', async () => {
    const run = await ingestCli([]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('RAG_SOURCE_UNAVAILABLE');
    expect(run.stderr).toContain('pnpm ingest gs://bucket/prefix');
  });
});

describe('pnpm ingest: the prune guard', () => {
  const REFUSED = /^RAG_PRUNE_REFUSED: Nothing was pruned: .*\(this run would delete (\d+) of (\d+) indexed documents \(([\d.]+) % > INGEST_MAX_PRUNE_RATIO 50 %; e\.g\. /m;

  /** A folder of three guides, indexed: the index the next runs must not empty by mistake. */
  async function indexedGuides(): Promise<string> {
    const folder = join(corpus.folder, 'guides');
    await mkdir(folder);
    for (const name of ['alpha.md', 'bravo.md', 'charlie.md']) await writeFile(join(folder, name), guide(2, name));
    expect((await ingestCli([folder])).code).toBe(0);
    return folder;
  }

  it('refuses to empty the index from an empty folder: done line, RAG_PRUNE_REFUSED, exit 1, index unchanged', async () => {
    const folder = await indexedGuides();
    const empty = join(corpus.folder, 'empty');
    await mkdir(empty);

    const run = await ingestCli([empty]);

    expect(run.code, run.stderr).toBe(1);
    expect(run.lastLine).toBe('done: 0 files, 0 chunks, 0 upserts, 0 deletes, 0 skipped, 0 errors');
    expect(run.stderr).toMatch(/^RAG_PRUNE_REFUSED: Nothing was pruned: .*\(the source listed no document, and this run would delete 3 of 3 indexed documents \(e\.g\. alpha\.md, bravo\.md, charlie\.md\)\.\)$/m);
    const rerun = await ingestCli([folder]);
    expect(rerun.lastLine, 'every document still indexed, unchanged').toBe('done: 3 files, 0 chunks, 0 upserts, 0 deletes, 3 skipped, 0 errors');
  });

  it('prunes 1 of 3 documents, refuses 2 of 3 while writing the new one, and deletes them with --force-prune', async () => {
    const folder = await indexedGuides();
    await rm(join(folder, 'charlie.md'));
    const one = await ingestCli([folder]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.lastLine).toMatch(/^done: 2 files, 0 chunks, 0 upserts, [1-9]\d* deletes, 2 skipped, 0 errors$/);

    await writeFile(join(folder, 'charlie.md'), guide(2, 'charlie.md'));
    expect((await ingestCli([folder])).code).toBe(0);
    await rm(join(folder, 'bravo.md'));
    await rm(join(folder, 'charlie.md'));
    await writeFile(join(folder, 'delta.md'), guide(1, 'delta'));

    const refused = await ingestCli([folder]);

    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.lastLine).toMatch(/^done: 2 files, (\d+) chunks, \1 upserts, 0 deletes, 1 skipped, 0 errors$/);
    expect(REFUSED.exec(refused.stderr)!.slice(1, 4)).toEqual(['2', '3', '66.7']);

    const forced = await ingestCli([folder, '--force-prune']);

    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.lastLine).toMatch(/^done: 2 files, 0 chunks, 0 upserts, [1-9]\d* deletes, 2 skipped, 0 errors$/);
    expect(forced.stderr).not.toContain('RAG_PRUNE_REFUSED');
  });

  it('reports the refusal in a dry run, with each document it would delete', async () => {
    await indexedGuides();
    const empty = join(corpus.folder, 'empty');
    await mkdir(empty);

    const dryRun = await ingestCli([empty, '--dry-run']);

    expect(dryRun.code, dryRun.stderr).toBe(1);
    expect(dryRun.stderr).toContain('RAG_PRUNE_REFUSED: ');
    const prunes = dryRun.stdout.trimEnd().split('\n').slice(0, -1);
    expect(prunes.map((line) => line.split('\t')[1])).toEqual(['alpha.md', 'bravo.md', 'charlie.md']);
    for (const line of prunes) expect(line).toMatch(/^-[1-9]\d*\t/);
    expect(dryRun.lastLine).toBe('done: 0 files, 0 chunks, 0 upserts, 0 deletes, 0 skipped, 0 errors');
  });

  it('guards a gs:// source the same way: an emptied prefix is refused, 2 of 3 objects gone too, --force-prune deletes', async () => {
    const gcs = await new FakeGcsServer('team-docs', 2).start();
    try {
      for (const name of ['alpha', 'bravo', 'charlie']) gcs.put(`handbook/${name}.md`, guide(2, name));
      const emulator = { STORAGE_EMULATOR_HOST: gcs.baseUrl };
      expect((await ingestCli(['gs://team-docs/handbook/'], emulator)).code).toBe(0);

      const mistyped = await ingestCli(['gs://team-docs/handbok/'], emulator);

      expect(mistyped.code, mistyped.stderr).toBe(1);
      expect(mistyped.lastLine).toBe('done: 0 files, 0 chunks, 0 upserts, 0 deletes, 0 skipped, 0 errors');
      expect(mistyped.stderr).toContain('RAG_PRUNE_REFUSED: ');
      expect(mistyped.stderr).toContain('(the source listed no document, and this run would delete 3 of 3 indexed documents (e.g. gs://team-docs/handbook/alpha.md,');

      gcs.remove('handbook/bravo.md');
      gcs.remove('handbook/charlie.md');
      gcs.put('handbook/delta.md', guide(1, 'delta'));
      const refused = await ingestCli(['gs://team-docs/handbook/'], emulator);

      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.lastLine).toMatch(/^done: 2 files, ([1-9]\d*) chunks, \1 upserts, 0 deletes, 1 skipped, 0 errors$/);
      expect(REFUSED.exec(refused.stderr)?.slice(1, 4)).toEqual(['2', '3', '66.7']);

      const forced = await ingestCli(['gs://team-docs/handbook/', '--force-prune'], emulator);

      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.lastLine).toMatch(/^done: 2 files, 0 chunks, 0 upserts, [1-9]\d* deletes, 2 skipped, 0 errors$/);
    } finally {
      await gcs.close();
    }
  });
});

describe('pnpm ingest: an access file gone missing', () => {
  it('refuses a look-alike name (exit 2), keeps restricted documents when the file is gone (RAG_ACCESS_WOULD_PUBLISH, exit 1), and publishes them with --allow-publish', { timeout: 180_000 }, async () => {
    const folder = join(corpus.folder, 'handbook');
    await mkdir(join(folder, 'hr'), { recursive: true });
    await writeFile(join(folder, 'hr', 'pay.md'), guide(2, 'payroll'));
    await writeFile(join(folder, 'welcome.md'), guide(2, 'welcome'));
    await writeFile(join(folder, '.rag-access.yaml'), 'rules:\n  - path: "hr/**"\n    groups: [hr]\n');
    expect((await ingestCli([folder])).code).toBe(0);

    await rename(join(folder, '.rag-access.yaml'), join(folder, '.rag-access.yml'));
    const renamed = await ingestCli([folder]);
    expect(renamed.code, renamed.stderr).toBe(2);
    expect(renamed.stderr).toMatch(/^RAG_ACCESS_FILE_INVALID: .*\(\.rag-access\.yml: only \.rag-access\.yaml/m);

    await rm(join(folder, '.rag-access.yml'));
    const missing = await ingestCli([folder]);
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.lastLine).toBe('done: 2 files, 0 chunks, 0 upserts, 0 deletes, 1 skipped, 0 errors');
    expect(missing.stderr).toMatch(/^RAG_ACCESS_WOULD_PUBLISH: Restricted documents were left as they are .*\(1 restricted document kept as indexed: hr\/pay\.md\.\)$/m);

    const allowed = await ingestCli([folder, '--allow-publish']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.lastLine).toMatch(/^done: 2 files, 0 chunks, [1-9]\d* upserts, 0 deletes, 1 skipped, 0 errors$/);
    expect(allowed.stderr).not.toContain('RAG_ACCESS_WOULD_PUBLISH');
  });
});

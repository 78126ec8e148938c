import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ACCESS_FILE, AccessRules, LocalDirectorySource, type SourceDocument } from '../../src/ingestion.ts';
import { isVisibleTo, normalizeGroups } from '../../src/index.ts';

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function folderWith(files: Record<string, string>): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'rag-access-'));
  folders.push(folder);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(folder, path, '..'), { recursive: true });
    await writeFile(join(folder, path), content);
  }
  return folder;
}

async function listed(source: LocalDirectorySource): Promise<Array<Pick<SourceDocument, 'uri' | 'groups'>>> {
  const documents: Array<Pick<SourceDocument, 'uri' | 'groups'>> = [];
  for await (const { uri, groups } of source.list()) documents.push({ uri, groups });
  return documents;
}

describe('.rag-access.yaml rules', () => {
  const rules = AccessRules.parse(`
rules:
  - path: "hr/**"
    groups: [hr]
  - path: "**/*.pdf"
    groups: [finance, " hr "]
  - path: "support/faq.md"
    groups: [support]
`);

  it('gives a document the union of the groups of every rule matching its path, sorted', () => {
    expect(rules.groupsOf('hr/pay/2026.md')).toEqual(['hr']);
    expect(rules.groupsOf('hr/pay/report.pdf')).toEqual(['finance', 'hr']);
    expect(rules.groupsOf('board/minutes.pdf')).toEqual(['finance', 'hr']);
    expect(rules.groupsOf('support/faq.md')).toEqual(['support']);
  });

  it('leaves a document no rule matches public, and matches globs on the whole relative path', () => {
    expect(rules.groupsOf('README.md')).toEqual([]);
    expect(rules.groupsOf('support/faq.md.bak')).toEqual([]);
    expect(rules.groupsOf('archive/hr/old.md')).toEqual([]);
    expect(rules.groupsOf('hr/.drafts/x.md')).toEqual(['hr']);
  });

  it('never lets a later, broader rule make a restricted document public again: order does not matter', () => {
    const reordered = AccessRules.parse('rules:\n  - {path: "**", groups: [staff]}\n  - {path: "hr/**", groups: [hr]}\n');
    expect(reordered.groupsOf('hr/pay.md')).toEqual(['hr', 'staff']);
    expect(reordered.groupsOf('README.md')).toEqual(['staff']);
  });

  it.each([
    ['a rule without groups', 'rules:\n  - {path: "hr/**", groups: []}\n', 'rules.0.groups: a rule needs at least one group'],
    ['a blank group only', 'rules:\n  - {path: "hr/**", groups: ["  "]}\n', 'rules.0.groups'],
    ['a rule without a path', 'rules:\n  - {groups: [hr]}\n', 'rules.0.path'],
    ['a misspelt key', 'rules:\n  - {paths: "hr/**", groups: [hr]}\n', 'rules.0'],
    ['no rules list', 'rule:\n  - {path: "hr/**", groups: [hr]}\n', 'rules: Required'],
    ['an empty file', '', 'the file: Expected object'],
    ['YAML that does not parse', 'rules: [\n', '.rag-access.yaml'],
  ])('refuses %s with RAG_ACCESS_FILE_INVALID, naming what is wrong', (_, text, says) => {
    expect(() => AccessRules.parse(text)).toThrowError(expect.objectContaining({ code: 'RAG_ACCESS_FILE_INVALID', message: expect.stringContaining(says) }));
  });
});

describe('groups helpers', () => {
  it('normalizes to one spelling and tells who sees a document', () => {
    expect(normalizeGroups([' hr', 'finance', 'hr', ''])).toEqual(['finance', 'hr']);
    const support = new Set(['support']);
    expect(isVisibleTo([], support)).toBe(true);
    expect(isVisibleTo(['hr', 'support'], support)).toBe(true);
    expect(isVisibleTo(['hr'], support)).toBe(false);
    expect(isVisibleTo(['hr'], new Set())).toBe(false);
  });
});

describe('a folder source with an access file', () => {
  it('lists each document with its groups and never lists the access file itself', async () => {
    const folder = await folderWith({
      [ACCESS_FILE]: 'rules:\n  - path: "hr/**"\n    groups: [hr]\n',
      'README.md': '# Welcome',
      'hr/pay.md': '# Pay',
    });
    expect(await listed(new LocalDirectorySource(folder))).toEqual([
      { uri: 'README.md', groups: [] },
      { uri: 'hr/pay.md', groups: ['hr'] },
    ]);
    // Named explicitly, it is still not a document.
    expect(await listed(new LocalDirectorySource(folder, { include: [ACCESS_FILE, 'hr'] }))).toEqual([{ uri: 'hr/pay.md', groups: ['hr'] }]);
  });

  it('lists every document as public without an access file', async () => {
    const folder = await folderWith({ 'hr/pay.md': '# Pay' });
    expect(await listed(new LocalDirectorySource(folder))).toEqual([{ uri: 'hr/pay.md', groups: [] }]);
  });

  it('lists nothing when the access file is invalid: restricted documents are never indexed as public', async () => {
    const folder = await folderWith({ [ACCESS_FILE]: 'rules:\n  - path: "hr/**"\n    group: [hr]\n', 'README.md': '# Welcome', 'hr/pay.md': '# Pay' });
    const documents: string[] = [];
    const listing = (async () => {
      for await (const document of new LocalDirectorySource(folder).list()) documents.push(document.uri);
    })();
    await expect(listing).rejects.toMatchObject({ code: 'RAG_ACCESS_FILE_INVALID' });
    expect(documents).toEqual([]);
  });
});

/** The listing's failure, and the documents it gave before failing (none is the only right answer). */
async function refusedListing(source: LocalDirectorySource): Promise<{ error: unknown; documents: string[] }> {
  const documents: string[] = [];
  try {
    for await (const document of source.list()) documents.push(document.uri);
  } catch (error) {
    return { error, documents };
  }
  return { error: undefined, documents };
}

describe('an access file that cannot be read fails the listing; only a missing one means public', () => {
  const asRoot = process.getuid?.() === 0;

  it('refuses a directory in its place (EISDIR)', async () => {
    const folder = await folderWith({ 'hr/pay.md': '# Pay' });
    await mkdir(join(folder, ACCESS_FILE));
    const { error, documents } = await refusedListing(new LocalDirectorySource(folder));
    expect(error).toMatchObject({ code: 'RAG_ACCESS_FILE_INVALID', message: expect.stringContaining('EISDIR') });
    expect(documents).toEqual([]);
  });

  it('refuses a link that loops (ELOOP) or leads nowhere', async () => {
    const looping = await folderWith({ 'hr/pay.md': '# Pay' });
    await symlink(ACCESS_FILE, join(looping, ACCESS_FILE));
    expect((await refusedListing(new LocalDirectorySource(looping))).error).toMatchObject({ code: 'RAG_ACCESS_FILE_INVALID', message: expect.stringContaining('ELOOP') });
    const dangling = await folderWith({ 'hr/pay.md': '# Pay' });
    await symlink('moved-away.yaml', join(dangling, ACCESS_FILE));
    expect((await refusedListing(new LocalDirectorySource(dangling))).error).toMatchObject({ code: 'RAG_ACCESS_FILE_INVALID', message: expect.stringContaining('ENOENT') });
  });

  it.skipIf(asRoot)(`refuses a file it may not read (EACCES)${asRoot ? ': skipped, the tests run as root, who reads a file of mode 000 anyway' : ''}`, async () => {
    const folder = await folderWith({ [ACCESS_FILE]: 'rules: []\n', 'hr/pay.md': '# Pay' });
    await chmod(join(folder, ACCESS_FILE), 0o000);
    expect((await refusedListing(new LocalDirectorySource(folder))).error).toMatchObject({ code: 'RAG_ACCESS_FILE_INVALID', message: expect.stringContaining('EACCES') });
  });
});

describe('access files that would not be applied are refused, not ignored', () => {
  for (const name of ['.rag-access.yml', 'rag-access.yaml', '.RAG-ACCESS.YAML', '.rag_access.yaml']) {
    it(`refuses ${name} at the root, the real file missing or not`, async () => {
      const alone = await folderWith({ [name]: 'rules:\n  - path: "hr/**"\n    groups: [hr]\n', 'hr/pay.md': '# Pay', 'docs/a.md': '# A' });
      for (const source of [new LocalDirectorySource(alone), new LocalDirectorySource(alone, { include: ['docs'] })]) {
        const { error, documents } = await refusedListing(source);
        expect(error).toMatchObject({ code: 'RAG_ACCESS_FILE_INVALID', message: expect.stringContaining(`(${name}: only .rag-access.yaml`) });
        expect(documents).toEqual([]);
      }
      const beside = await folderWith({ [ACCESS_FILE]: 'rules: []\n', [name]: 'rules: []\n', 'hr/pay.md': '# Pay' });
      expect((await refusedListing(new LocalDirectorySource(beside))).error).toMatchObject({ code: 'RAG_ACCESS_FILE_INVALID' });
    });
  }

  it('refuses a .rag-access.yaml in a sub-folder, naming each', async () => {
    const folder = await folderWith({ [ACCESS_FILE]: 'rules: []\n', 'hr/.rag-access.yaml': 'rules: []\n', 'hr/pay.md': '# Pay', 'ops/deep/rag-access.yml': 'x' });
    const { error, documents } = await refusedListing(new LocalDirectorySource(folder));
    expect(error).toMatchObject({ code: 'RAG_ACCESS_FILE_INVALID', message: expect.stringContaining('(hr/.rag-access.yaml, ops/deep/rag-access.yml: only') });
    expect(documents).toEqual([]);
  });

  it('still lists documents whose names merely mention access', async () => {
    const folder = await folderWith({ 'docs/rag-access.md': '# About access', 'docs/access.yaml': 'a: 1' });
    expect((await listed(new LocalDirectorySource(folder))).map((document) => document.uri)).toEqual(['docs/access.yaml', 'docs/rag-access.md']);
  });
});

describe('symbolic links in a folder source', () => {
  it('are not followed, and are reported as skipped with the reason', async () => {
    const folder = await folderWith({ 'docs/a.md': '# A', 'elsewhere/b.md': '# B' });
    await symlink(join(folder, 'docs', 'a.md'), join(folder, 'docs', 'link.md'));
    await symlink(join(folder, 'elsewhere'), join(folder, 'docs', 'linked-folder'));
    const source = new LocalDirectorySource(folder, { include: ['docs'] });
    expect((await listed(source)).map((document) => document.uri)).toEqual(['docs/a.md']);
    expect(source.skippedEntries).toEqual([
      { uri: 'docs/link.md', reason: 'symbolic link, not followed' },
      { uri: 'docs/linked-folder', reason: 'symbolic link, not followed' },
    ]);
  });
});

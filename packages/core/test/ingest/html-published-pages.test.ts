import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/chunking/chunk-markdown.ts';
import type { Chunk } from '../../src/domain.ts';
import { HtmlConverter, type HtmlOptions } from '../../src/converters/html.ts';

/** Real pages of published manuals (fixtures/html-manuals/README.md), converted and chunked as the ingest does. */
async function chunksOf(page: string, options: HtmlOptions = {}): Promise<Chunk[]> {
  const bytes = readFileSync(new URL(`../fixtures/html-manuals/${page}`, import.meta.url));
  const converted = await new HtmlConverter(options).toPagedMarkdown(bytes);
  return chunkDocument(converted, page, { chunkSize: 1200, chunkOverlap: 200 });
}

/** What the user reads of a chunk: its text after the source and heading line. */
const bodyOf = (chunk: Chunk) => chunk.text.slice(chunk.text.indexOf('\n\n') + 2);
const everyBody = (chunks: Chunk[]) => chunks.map(bodyOf).join('\n');
const headingPaths = (chunks: Chunk[]) => [...new Set(chunks.map((chunk) => chunk.headingPath))];

/**
 * What the old converter (node-html-markdown) put into chunks of these pages: Markdown escapes (`pg\\_dump`),
 * links with their targets (`[Section 30.6](wal-internals.html "30.6.WAL Internals")`), tables padded to
 * align their columns, permalink signs. Code blocks keep their own spacing.
 */
function expectCleanText(chunks: Chunk[], page: string): void {
  const text = `${everyBody(chunks)}\n${headingPaths(chunks).join('\n')}`;
  expect(text).not.toMatch(/\\[_.*[\]#-]/);
  expect(text).not.toMatch(/\]\([^)]*\)/);
  expect(text).not.toContain('¶');
  const html = readFileSync(new URL(`../fixtures/html-manuals/${page}`, import.meta.url), 'utf8');
  const targets = [...html.matchAll(/href="([^"]+#[^"]+)"/g)].map((match) => match[1]!);
  expect(targets.length).toBeGreaterThan(0);
  for (const target of new Set(targets)) expect(text).not.toContain(target);
  const prose = text.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1$/gm, '');
  expect(prose).not.toMatch(/ {3,}|-{4,}/);
}

describe('published DocBook pages (PostgreSQL)', () => {
  it('index the page without its navigation header and footer, nor its in-page table of contents', async () => {
    const chunks = await chunksOf('postgresql-runtime-config-replication.html');
    const text = everyBody(chunks);
    // The footer names the neighbouring pages: a query for them must not find this one.
    expect(text).not.toMatch(/\bPrev\b|\bNext\b|\bHome\b|\bUp\b/);
    expect(text).not.toContain('20.5. Write Ahead Log');
    expect(text).not.toContain('20.7. Query Planning');
    expect(text).not.toContain('20.6.2. Primary Server');
    expect(chunks[0]!.headingPath).toBe('20.6. Replication');
    expectCleanText(chunks, 'postgresql-runtime-config-replication.html');
  });

  it('make each parameter of a long variable list its own section, found by its name', async () => {
    const paths = headingPaths(await chunksOf('postgresql-runtime-config-replication.html'));
    expect(paths).toContain('20.6. Replication > 20.6.1. Sending Servers > max_wal_senders (integer)');
    expect(paths).toContain('20.6. Replication > 20.6.3. Standby Servers > hot_standby (boolean)');
    // DocBook titles a note with an h3: it heads the note inside its entry, and the parameters after it stay in their section.
    expect(paths).toContain('20.6. Replication > 20.6.1. Sending Servers > output_plugin_libraries (string) > Note');
    expect(paths).toContain('20.6. Replication > 20.6.1. Sending Servers > wal_keep_size (integer)');
    // After the list, text goes back under the section's own heading.
    const chunk = (await chunksOf('postgresql-runtime-config-replication.html')).find((candidate) => candidate.headingPath.endsWith('max_wal_senders (integer)'));
    expect(bodyOf(chunk!)).toMatch(/^max_wal_senders \(integer\)\n\nSpecifies the maximum number of concurrent connections from standby servers/);
    expect(bodyOf(chunk!)).toContain('`wal_level` must be set to `replica` or higher');
  });
});

describe('published Sphinx pages', () => {
  it('Python: API objects are sections named by their signature; code keeps its language and lines; no site navigation', async () => {
    const chunks = await chunksOf('python-library-glob.html');
    expect(headingPaths(chunks)).toContain(
      'glob — Unix style pathname pattern expansion > glob.glob(pathname, *, root_dir=None, dir_fd=None, recursive=False, include_hidden=False)',
    );
    expect(headingPaths(chunks)).toContain('glob — Unix style pathname pattern expansion > glob.escape(pathname)');
    const text = everyBody(chunks);
    expect(text).toContain('```python3\n>>> import glob\n');
    expect(text).not.toMatch(/Quick search|Table of Contents|Previous topic|Next topic|Python Software Foundation|Found a bug/);
    expect(text).toContain('results are returned in arbitrary order');
    expectCleanText(chunks, 'python-library-glob.html');
  });

  it("Django: the site's banner, sidebar and footer are left out; the page title heads every path; [source] links are not titles", async () => {
    const chunks = await chunksOf('django-topics-http-shortcuts.html');
    const text = everyBody(chunks);
    expect(text).not.toMatch(/Django 3\.2\.25 documentation|Last update|Previous topic|Browse|Quick search|Table of contents/);
    expect(chunks.every((chunk) => chunk.headingPath.startsWith('Django shortcut functions'))).toBe(true);
    expect(headingPaths(chunks)).toContain('Django shortcut functions > render() > render(request, template_name, context=None, content_type=None, status=None, using=None)');
    expect(text).toContain('Combines a given template with a given context dictionary');
    expectCleanText(chunks, 'django-topics-http-shortcuts.html');
  });

  it('Linux kernel (Read the Docs theme): each sysctl of the long list is a section; no sidebar, breadcrumbs or footer', async () => {
    const chunks = await chunksOf('kernel-admin-guide-sysctl-vm.html');
    expect(headingPaths(chunks)).toContain('Documentation for /proc/sys/vm/ > dirty_background_ratio');
    const text = everyBody(chunks);
    expect(text).not.toMatch(/Copyright The kernel development community|Built with Sphinx|View page source|Next\b|Previous\b/);
    expectCleanText(chunks, 'kernel-admin-guide-sysctl-vm.html');
  });

  it('a table of contents is a link list: by default indexed without its links; INGEST_LINK_PAGES=full keeps them', async () => {
    const converter = new HtmlConverter();
    const light = await converter.toPagedMarkdown(readFileSync(new URL('../fixtures/html-manuals/django-contents.html', import.meta.url)));
    expect(light.linkList).toMatchObject({ indexedLightly: true });
    expect(light.linkList!.links).toBeGreaterThan(500);
    const lightChunks = await chunksOf('django-contents.html');
    expect(lightChunks).toHaveLength(1);
    expect(everyBody(lightChunks)).toContain('Django documentation contents');
    const full = await chunksOf('django-contents.html', { linkPages: 'full' });
    expect(full.length).toBeGreaterThan(10);
    expect(everyBody(full)).toContain('Writing your first Django app, part 1');
    expectCleanText(full, 'django-contents.html');
  });
});

describe('published pages of other generators', () => {
  it('Javadoc: members are sections; a page holding a NUL character is indexed, not refused as binary', async () => {
    const chunks = await chunksOf('commons-lang3-CharUtils.html');
    expect(headingPaths(chunks)).toContain('CharUtils (Apache Commons Lang 3.12.0 API) > Class CharUtils > Method Details > isAsciiAlpha');
    expect(everyBody(chunks)).not.toMatch(/Overview|Skip navigation|All Classes and Interfaces/);
    expect(everyBody(chunks)).not.toContain('\0');
  });

  it("AsciiDoc man page: each command of the option list is a section named by its synopsis", async () => {
    const paths = headingPaths(await chunksOf('git-stash.html'));
    expect(paths).toContain('git-stash(1) Manual Page > COMMANDS > pop [--index] [-q|--quiet] [<stash>]');
    expect(paths).toContain('git-stash(1) Manual Page > COMMANDS > clear');
  });
});

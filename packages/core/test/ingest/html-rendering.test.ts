import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/chunking/chunk-markdown.ts';
import { htmlToDocument } from '../../src/converters/html.ts';

const converted = (body: string, title = '') => htmlToDocument(`<html><head><title>${title}</title></head><body><main>${body}</main></body></html>`);
const chunksOf = (body: string, title = '') => chunkDocument(converted(body, title), 'page.html', { chunkSize: 1200, chunkOverlap: 200 });
const bodyOf = (text: string) => text.slice(text.indexOf('\n\n') + 2);

describe('HTML rendered as clean text', () => {
  it('writes identifiers and numbered headings as they read: no Markdown escaping, no link targets', () => {
    const [chunk] = chunksOf('<h2>28.2. The Cumulative Statistics System</h2><p>Run <a href="app-pgdump.html#PG-DUMP" title="pg_dump">pg_dump</a> with <code>--no-owner</code>; see <a href="a.html">Section 30.6</a> *not* emphasis_here.</p>');
    expect(chunk!.headingPath).toBe('28.2. The Cumulative Statistics System');
    expect(bodyOf(chunk!.text)).toBe('Run pg_dump with `--no-owner`; see Section 30.6 *not* emphasis_here.');
  });

  it('writes code elements side by side as one code span', () => {
    const [chunk] = chunksOf('<p>Default: <code>\'</code><code class="xref">django.db.models.AutoField</code><code>\'</code>, or <code>a</code> <code>b</code>.</p>');
    expect(bodyOf(chunk!.text)).toBe("Default: `'django.db.models.AutoField'`, or `a` `b`.");
  });

  it('collapses whitespace, turns no-break spaces into spaces, keeps line breaks and pictures with something to say', () => {
    const [chunk] = chunksOf('<p>Wait&nbsp;for\n   the   <b>green</b>\tlight<br>then go <img src="go.png" alt="arrow pointing right"> <img src="x.png" alt="x.png"></p>');
    expect(bodyOf(chunk!.text)).toBe('Wait for the green light\nthen go arrow pointing right');
  });

  it('writes data tables compactly, a separator under their header row, and layout tables as blocks', () => {
    const [chunk] = chunksOf(`<table><caption>Settings</caption><thead><tr><th>name</th><th>default</th></tr></thead>
      <tbody><tr><td>  max_connections  </td><td>100</td></tr><tr><td></td><td></td></tr><tr><td>port</td><td>5432</td></tr></tbody></table>
      <table><tr><td><p>Left column</p><ul><li>point</li></ul></td><td>Right column</td></tr></table>`);
    expect(bodyOf(chunk!.text)).toBe('Settings\n| name | default |\n| --- | --- |\n| max_connections | 100 |\n| port | 5432 |\n\nLeft column\n\n* point\n\nRight column');
  });

  it('keeps code as code: fenced with its language, lines and indentation as written, the fence longer than any backticks in it', () => {
    const document = converted('<div class="highlight-python3"><pre><span class="k">def</span> f():\n    return "```"\n</pre></div><pre class="language-yaml">a:\n  b: 1</pre>');
    expect(document.markdown).toBe('````python3\ndef f():\n    return "```"\n````\n\n```yaml\na:\n  b: 1\n```');
    const [chunk] = chunkDocument(document, 'page.html', { chunkSize: 1200, chunkOverlap: 200 });
    expect(bodyOf(chunk!.text)).toContain('def f():\n    return "```"');
  });

  it('writes lists as items, numbered from their start, nested ones under their item (chunk lines are not indented)', () => {
    expect(converted('<ol start="3"><li>Stop the server<ul><li>wait for it</li></ul></li><li><p>Copy the files</p></li></ol>').markdown).toBe('3. Stop the server\n* wait for it\n4. Copy the files');
  });

  it('counts heading levels from the page\'s highest, so a DocBook page (h2 titles) has the same paths as any other', () => {
    const document = converted('<h2>20.6. Replication</h2><p>Intro.</p><h3>20.6.1. Sending Servers</h3><p>Senders.</p>');
    expect(document.structure!.headings).toEqual([
      { line: 0, level: 1, text: '20.6. Replication' },
      { line: 4, level: 2, text: '20.6.1. Sending Servers' },
    ]);
  });

  it("heads a page whose content starts with text with the page's title", () => {
    expect(chunksOf('<p>Package keys</p><h1>Class KeyStore</h1><p>Stores keys.</p>', 'KeyStore (Keys API)').map((chunk) => chunk.headingPath)).toEqual([
      'KeyStore (Keys API)',
      'KeyStore (Keys API) > Class KeyStore',
    ]);
    expect(chunksOf('<h1>Class KeyStore</h1><p>Stores keys.</p>', 'KeyStore (Keys API)').map((chunk) => chunk.headingPath)).toEqual(['Class KeyStore']);
  });

  it('cuts a heading past 300 characters', () => {
    const [chunk] = chunksOf(`<h1>${'long '.repeat(100)}</h1><p>Text.</p>`);
    expect(chunk!.headingPath.length).toBe(300);
    expect(chunk!.headingPath.endsWith('…')).toBe(true);
  });
});

describe('sections end with the element that holds them', () => {
  const paths = (body: string) => chunksOf(body).map((chunk) => [chunk.headingPath, bodyOf(chunk.text)]);

  it("a note's heading heads the note alone, nested under the entry it is in; what follows goes back", () => {
    const entry = (name: string, extra = '') => `<dt id="${name}">${name}</dt><dd><p>${name} does things.</p>${extra}</dd>`;
    const note = '<div class="note"><h3 class="title">Note</h3><p>Mind the upgrade.</p></div>';
    expect(paths(`<div class="sect1"><h2>20.6. Replication</h2><div class="sect2"><div class="titlepage"><div><h3>20.6.1. Sending Servers</h3></div></div>
      <dl>${entry('max_wal_senders', note)}${entry('wal_keep_size')}</dl><p>After the list.</p></div></div>`)).toEqual([
      ['20.6. Replication > 20.6.1. Sending Servers > max_wal_senders', 'max_wal_senders\n\nmax_wal_senders does things.'],
      ['20.6. Replication > 20.6.1. Sending Servers > max_wal_senders > Note', 'Mind the upgrade.'],
      ['20.6. Replication > 20.6.1. Sending Servers > wal_keep_size', 'wal_keep_size\n\nwal_keep_size does things.'],
      ['20.6. Replication > 20.6.1. Sending Servers', 'After the list.'],
    ]);
  });

  it('a section wrapped in its own element ends with it, a title box ending with its title does not', () => {
    expect(paths('<h1>Guide</h1><div class="section"><h2>Install</h2><p>Run it.</p></div><p>Closing words.</p>')).toEqual([
      ['Guide > Install', 'Run it.'],
      ['Guide', 'Closing words.'],
    ]);
    expect(paths('<h1>Guide</h1><div class="header"><p>Package keys</p><h2>Class KeyStore</h2></div><p>Stores keys.</p>')).toEqual([
      ['Guide', 'Package keys'],
      ['Guide > Class KeyStore', 'Stores keys.'],
    ]);
    expect(paths('<div id="header"><h1>git-stash(1)</h1><h2>NAME</h2><p>git-stash - stash changes</p></div><h2>SYNOPSIS</h2><p>git stash list</p>')).toEqual([
      ['git-stash(1) > NAME', 'git-stash - stash changes'],
      ['git-stash(1) > SYNOPSIS', 'git stash list'],
    ]);
  });
});

describe('definition lists', () => {
  const entry = (term: string, words: number) => `<dt>${term}</dt><dd><p>${`${term} explained `.repeat(words)}</p></dd>`;

  it('a long one: each entry is a section headed by its term, and the text after the list goes back to the heading above it', () => {
    const chunks = chunksOf(`<h1>Settings</h1><dl>${entry('max_wal_senders (integer)', 30)}${entry('wal_keep_size (integer)', 30)}</dl><p>These settings need a restart.</p>`);
    expect(chunks.map((chunk) => chunk.headingPath)).toEqual(['Settings > max_wal_senders (integer)', 'Settings > wal_keep_size (integer)', 'Settings']);
    // The term stays the first line of its entry, as the page shows it: the entry's own text names its subject.
    expect(bodyOf(chunks[0]!.text)).toMatch(/^max_wal_senders \(integer\)\n\nmax_wal_senders \(integer\) explained/);
    expect(bodyOf(chunks[2]!.text)).toBe('These settings need a restart.');
  });

  it('one whose terms are link targets (an API reference) is sections however short; a term\'s aliases share its heading; [source] links are no part of it', () => {
    const chunks = chunksOf('<h1>os</h1><dl class="py function"><dt id="os.chmod">os.chmod(path, mode) <a href="_modules/os.html">[source]</a></dt><dt id="os.lchmod">os.lchmod(path, mode)</dt><dd><p>Change the mode.</p></dd></dl>');
    expect(chunks.map((chunk) => chunk.headingPath)).toEqual(['os > os.chmod(path, mode) / os.lchmod(path, mode)']);
  });

  it('a short gloss, an index of terms without descriptions, or one inside a list item stays text', () => {
    expect(chunksOf('<h1>Terms</h1><dl><dt>RPO</dt><dd>Recovery point objective.</dd></dl>').map((chunk) => [chunk.headingPath, bodyOf(chunk.text)])).toEqual([['Terms', 'RPO\n\nRecovery point objective.']]);
    const index = `<dl>${Array.from({ length: 40 }, (_, n) => `<dt id="t${n}">term ${n}, page ${n}</dt>`).join('')}</dl>`;
    expect(chunksOf(`<h1>Index</h1>${index}`).every((chunk) => chunk.headingPath === 'Index')).toBe(true);
    expect(converted(`<ul><li>Options<dl>${entry('-v', 60)}</dl></li></ul>`).structure!.headings).toEqual([]);
  });

  it('a long list of a single entry stays text: one description, however long, is not a reference section', () => {
    const chunks = chunksOf(`<h1>Settings</h1><dl>${entry('max_wal_senders (integer)', 60)}</dl>`);
    expect(`max_wal_senders (integer) explained `.repeat(60).length).toBeGreaterThan(1000);
    expect(chunks.every((chunk) => chunk.headingPath === 'Settings')).toBe(true);
  });

  it('an entry of more than four terms is a list of names, not a heading: no sections, even when the terms are link targets', () => {
    const terms = (count: number) => Array.from({ length: count }, (_, n) => `<dt id="os.chmod${n}">os.chmod${n}(path, mode)</dt>`).join('');
    const list = (count: number) => `<h1>os</h1><dl>${terms(count)}<dd><p>Change the mode.</p></dd><dt id="os.chown">os.chown(path, uid, gid)</dt><dd><p>Change the owner.</p></dd></dl>`;
    expect(chunksOf(list(4)).map((chunk) => chunk.headingPath)).toEqual([
      'os > os.chmod0(path, mode) / os.chmod1(path, mode) / os.chmod2(path, mode) / os.chmod3(path, mode)',
      'os > os.chown(path, uid, gid)',
    ]);
    expect(chunksOf(list(5)).every((chunk) => chunk.headingPath === 'os')).toBe(true);
  });

  it('a short list is sections only when every entry is a link target, not when one of them is', () => {
    const list = '<h1>os</h1><dl><dt id="os.chmod">os.chmod(path, mode)</dt><dd><p>Change the mode.</p></dd><dt>chown</dt><dd><p>Change the owner.</p></dd></dl>';
    expect(chunksOf(list).every((chunk) => chunk.headingPath === 'os')).toBe(true);
    expect(converted(list).structure!.headings.map((heading) => heading.text)).toEqual(['os']);
  });
});

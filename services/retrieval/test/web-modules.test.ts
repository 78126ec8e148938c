/**
 * The web page's logic that needs no browser: which sentence of a passage an answer cites, the page
 * labels and document links of paged sources, and how /app.js is joined from the page's modules.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { joinPageModules } from '../src/routes/page-script.ts';
// @ts-expect-error: a browser module in plain JavaScript, without type declarations
import { documentHref, documentLink, openWithKey, pageLabel } from '../src/web/document-links.js';
// @ts-expect-error: a browser module in plain JavaScript, without type declarations
import { citedSentenceIndices, claimsByCitation, sentenceRanges } from '../src/web/sentence-match.js';

describe('which passage sentence an answer cites', () => {
  const passage = [
    'To restore a snapshot, run stratactl restore and check the row counts before promoting it.',
    'Restores into production need two approvals.',
    'Snapshots older than 35 days are deleted.',
  ];

  it('gives each label the sentences before it, back to the previous label; adjacent labels share them', () => {
    const claims = claimsByCitation('Intro line.\n\n> Check the row counts first. Then promote it. [backups.md#1]\n- Two approvals [a.md#0] [b.md#2], and more [c.md#3].');
    expect(claims.get('backups.md#1')).toEqual(['Check the row counts first.', 'Then promote it.']);
    expect(claims.get('a.md#0')).toEqual(['Two approvals']);
    expect(claims.get('b.md#2')).toEqual(['Two approvals']);
    expect(claims.get('c.md#3')).toEqual([', and more']);
  });

  it('reads a sentence across wrapped lines, as Markdown and PDF text wrap them', () => {
    const wrapped = 'Overgreasing a heron pump\nbearing raises its temperature. Purge the excess\r\nthrough the relief plug.';
    expect(sentenceRanges(wrapped).map((range: { start: number; end: number }) => wrapped.slice(range.start, range.end))).toEqual([
      'Overgreasing a heron pump\nbearing raises its temperature.',
      'Purge the excess\r\nthrough the relief plug.',
    ]);
  });

  it('marks the best matching sentence of a quote or a paraphrase, and none for an unrelated claim', () => {
    expect([...citedSentenceIndices([passage[0]], passage)]).toEqual([0]);
    expect([...citedSentenceIndices(['Production restores require two approvals.'], passage)]).toEqual([1]);
    expect([...citedSentenceIndices(['The laptop arrives on the first day.'], passage)]).toEqual([]);
    expect([...citedSentenceIndices([passage[2], passage[0]], passage)].sort()).toEqual([0, 2]);
  });
});

describe('page labels and document links', () => {
  it('says p./pp. for a PDF and slide/slides for a deck', () => {
    expect(pageLabel({ source: 'manuals/field.pdf', page: 12 })).toBe('p. 12');
    expect(pageLabel({ source: 'manuals/field.pdf', page: 12, pages: [12, 13] })).toBe('pp. 12–13');
    expect(pageLabel({ source: 'decks/q3.PPTX', page: 3 })).toBe('slide 3');
    expect(pageLabel({ source: 'decks/q3.pptx', page: 3, pages: [3, 4, 5] })).toBe('slides 3–5');
    expect(pageLabel({ source: 'notes.md' })).toBe('');
  });

  it('links to GET /documents/<source, URL-encoded>, at #page=N for a PDF (RFC 8118 §3)', () => {
    expect(documentHref('manuals/field manual.pdf', 2)).toBe('/documents/manuals%2Ffield%20manual.pdf#page=2');
    expect(documentHref('gs://bucket/a#b.md', undefined)).toBe('/documents/gs%3A%2F%2Fbucket%2Fa%23b.md');
    expect(documentHref('decks/q3.pptx', 3)).toBe('/documents/decks%2Fq3.pptx');
  });
});

/**
 * Reverse tabnabbing (https://owasp.org/www-community/attacks/Reverse_Tabnabbing): a tab opened from the
 * page must get no window.opener, as the page may send it to another origin (a gs:// signed URL).
 * `noopener` and `noreferrer` are the HTML link types (https://html.spec.whatwg.org/multipage/links.html#link-type-noopener);
 * the tab opened by window.open is cut with `opener = null` (the opener setter disowns it). Node has no DOM:
 * the few browser objects the module touches are stood in for, and the API's JSON answer for a signed URL
 * (docs/api.md, GET /documents) comes from a real server on port 0.
 */
describe('document tabs keep no handle on the page', () => {
  const globals = globalThis as Record<string, unknown>;
  afterEach(() => {
    delete globals['document'];
    delete globals['window'];
  });

  it('a document link opens a new tab with rel="noopener noreferrer"', () => {
    globals['document'] = { createElement: (tag: string) => ({ tagName: tag.toUpperCase(), dataset: {} }) };
    const link = documentLink({ source: 'gs://bucket/hr/plan.pdf', page: 2 });
    expect([link.tagName, link.target, link.rel]).toEqual(['A', '_blank', 'noopener noreferrer']);
  });

  it('a tab opened with the key is cut from the page before it is sent to the signed URL', async () => {
    const signed = 'https://storage.googleapis.com/bucket/hr/plan.pdf?X-Goog-Signature=abc';
    const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: signed, expires_at: '2026-12-02T06:00:00Z' })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const navigations: Array<{ href: string; opener: unknown }> = [];
      const tab = {
        opener: { page: 'this one' } as unknown,
        close: () => undefined,
        location: {
          set href(href: string) {
            navigations.push({ href, opener: tab.opener });
          },
        },
      };
      globals['window'] = { open: () => tab };
      const { port } = server.address() as AddressInfo;
      const errors: unknown[] = [];
      await openWithKey({ href: `http://127.0.0.1:${port}/documents/gs%3A%2F%2Fbucket%2Fhr%2Fplan.pdf#page=2`, hash: '#page=2', dataset: {} }, (error: unknown) => errors.push(error));
      expect(errors).toEqual([]);
      expect(navigations).toEqual([{ href: `${signed}#page=2`, opener: null }]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('joining the page modules into /app.js', () => {
  async function folderWith(files: Record<string, string>): Promise<URL> {
    const folder = await mkdtemp(join(tmpdir(), 'rag-web-modules-'));
    for (const [name, text] of Object.entries(files)) await writeFile(join(folder, name), text);
    return pathToFileURL(`${folder}/`);
  }

  it('runs each module once, in its own scope, dependencies first', async () => {
    const folder = await folderWith({
      'app.js': "import { twice } from './math.js';\nimport { log } from './log.js';\nconst local = 'app';\nlog(twice(21), local);\n",
      'math.js': "import { log } from './log.js';\nconst local = 'math';\nlog('math loaded', local);\nexport function twice(n) {\n  return 2 * n;\n}\n",
      'log.js': 'export const log = (...values) => globalThis.logged.push(values.join(" "));\n',
    });
    const logged: string[] = [];
    new Function('globalThis', joinPageModules(folder, 'app.js'))({ logged });
    expect(logged).toEqual(['math loaded math', '42 app']);
    await rm(folder, { recursive: true, force: true });
  });

  it('refuses module syntax it does not handle, when the app starts', async () => {
    const folder = await folderWith({ 'app.js': "import thing from './x.js';\n", 'b.js': 'export default 1;\n' });
    expect(() => joinPageModules(folder, 'app.js')).toThrow(/only "import \{ … \} from '.\/x.js'"/);
    expect(() => joinPageModules(folder, 'b.js')).toThrow(/export default 1/);
    await rm(folder.pathname, { recursive: true, force: true });
  });
});

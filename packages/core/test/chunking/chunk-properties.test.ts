/**
 * Properties of the Markdown chunker over random documents, checked with fast-check: the chunks of
 * each section, laid over it in order with their overlaps removed, give back the section's text (only
 * the whitespace the splitter strips at a cut may be missing), and the same input gives the same
 * chunks and ids.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import { splitMarkdownSections } from '../../src/chunking/markdown-sections.ts';

const SOURCE = 'docs/random.md';
const VOCABULARY = ['backup', 'restore', 'snapshot', 'the', 'a', 'é', 'naïve', '😀', '日本', 'k8s', '--flag', '`code`', '*em*', '[link](x)', '|', '#', 'x'];

const word = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...VOCABULARY) }, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }));
const words = fc.array(word, { minLength: 1, maxLength: 25 }).map((list) => list.join(' '));
const indent = fc.constantFrom('', '', ' ', '  ', '    ', '\t');

/** Markdown blocks: headings h1–h4, paragraphs, lists, fenced code with indentation, tables, rules, stray lines. */
const block = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 4 }), words).map(([level, title]) => `${'#'.repeat(level)} ${title}`),
  fc.array(words, { minLength: 1, maxLength: 4 }).map((lines) => lines.join('\n')),
  fc.array(words, { minLength: 1, maxLength: 5 }).map((items) => items.map((item) => `- ${item}`).join('\n')),
  fc
    .tuple(fc.constantFrom('```', '~~~', '````'), fc.array(fc.tuple(indent, words), { maxLength: 6 }))
    .map(([fence, lines]) => [`${fence}yaml`, ...lines.map(([space, line]) => space + line), fence].join('\n')),
  fc
    .array(fc.tuple(words, words), { minLength: 1, maxLength: 8 })
    .map((rows) => ['| name | value |', '| --- | --- |', ...rows.map(([a, b]) => `| ${a} | ${b} |`)].join('\n')),
  fc.constantFrom('---', '===', '', '   ', '\u00a0', '> quoted # not a heading'),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);

const markdown = fc.array(fc.tuple(block, fc.constantFrom('\n', '\n\n', '\n\n\n')), { maxLength: 20 }).map((blocks) => blocks.map(([b, gap]) => b + gap).join(''));
const options = fc.integer({ min: 20, max: 400 }).chain((chunkSize) => fc.record({ chunkSize: fc.constant(chunkSize), chunkOverlap: fc.integer({ min: 0, max: Math.floor(chunkSize / 2) }) }));

const isBlank = (text: string): boolean => /^\s*$/u.test(text);
const TABLE_ROW = /^\s*\|/;

function prefixOf(headingPath: string): string {
  return headingPath === '' ? `${SOURCE}\n\n` : `${SOURCE} > ${headingPath}\n\n`;
}

/** The chunk's own text, and the same without a leading table header (two table rows) when it carries one. */
function bodyVariants(body: string): string[] {
  const lines = body.split('\n');
  return lines.length > 2 && TABLE_ROW.test(lines[0]!) && TABLE_ROW.test(lines[1]!) ? [body, lines.slice(2).join('\n')] : [body];
}

interface Section {
  headingPath: string;
  text: string;
}

/**
 * Lays the chunk bodies over the sections, in order: each body is a piece of its section (same heading
 * path) starting after the previous piece's start, and either overlaps the text covered so far or
 * follows it after whitespace only; a section is done when the covered text reaches its end. True when
 * every body is placed and every section covered. LangChain's splitter can emit a piece lying wholly
 * inside the previous one (a retained overlap whose continuation was stripped away): allowed, it adds
 * nothing. A search with backtracking, since repeated text can hold a body at several places.
 */
function layOver(sections: Section[], bodies: string[][], headingPaths: string[]): boolean {
  const failed = new Set<string>();
  const place = (s: number, i: number, previousStart: number, covered: number): boolean => {
    if (s === sections.length) return i === bodies.length;
    const key = `${s}:${i}:${previousStart}:${covered}`;
    if (failed.has(key)) return false;
    const section = sections[s]!.text;
    const end = section.trimEnd().length;
    if (covered === end && place(s + 1, i, -1, 0)) return true;
    if (i < bodies.length && headingPaths[i] === sections[s]!.headingPath) {
      for (const body of bodies[i]!) {
        for (let at = section.indexOf(body, previousStart + 1); at !== -1; at = section.indexOf(body, at + 1)) {
          if (at > covered && !isBlank(section.slice(covered, at))) break;
          if (at + body.length > end) continue;
          if (place(s, i + 1, at, Math.max(covered, at + body.length))) return true;
        }
      }
    }
    failed.add(key);
    return false;
  };
  return place(0, 0, -1, 0);
}

describe('chunking random Markdown', () => {
  it('covers every section, in order, with overlapping or adjacent chunks and nothing else', () => {
    fc.assert(
      fc.property(markdown, options, (input, split) => {
        const chunks = chunkMarkdown(input, SOURCE, split);
        const bodies = chunks.map((chunk) => {
          expect(chunk.text.startsWith(prefixOf(chunk.headingPath))).toBe(true);
          return bodyVariants(chunk.text.slice(prefixOf(chunk.headingPath).length));
        });
        const sections = splitMarkdownSections(input).filter((section) => !isBlank(section.text));
        expect(layOver(sections, bodies, chunks.map((chunk) => chunk.headingPath))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('numbers chunks from 0 and gives the same chunks and ids for the same input', () => {
    fc.assert(
      fc.property(markdown, options, (input, split) => {
        const chunks = chunkMarkdown(input, SOURCE, split);
        expect(chunkMarkdown(input, SOURCE, split)).toEqual(chunks);
        expect(chunks.map((chunk) => chunk.chunkIndex)).toEqual(chunks.map((_, index) => index));
        expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(chunks.length);
        for (const chunk of chunks) expect(chunk.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        // An id names a source and a position, not a text: another document at the same path reuses them.
        const other = chunkMarkdown(`${input}\n\nappended paragraph`, SOURCE, split);
        for (const [index, chunk] of chunks.entries()) expect(other[index]?.id ?? chunk.id).toBe(chunk.id);
        const elsewhere = chunkMarkdown(input, 'docs/other.md', split);
        for (const [index, chunk] of chunks.entries()) expect(elsewhere[index]!.id).not.toBe(chunk.id);
      }),
      { numRuns: 100 },
    );
  });
});

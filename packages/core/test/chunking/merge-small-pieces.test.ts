import { describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import { mergeSmallPieces } from '../../src/chunking/merge-small-pieces.ts';

const long = (word: string, count = 60) => Array.from({ length: count }, (_, i) => `${word}${i}`).join(' ');

describe('mergeSmallPieces', () => {
  it('joins a heading-only section with the next one under the heading path they share, keeping the dropped heading in the text', () => {
    const merged = mergeSmallPieces(
      [
        { headingPath: 'API > update_or_create() > update_or_create(defaults=None)', text: 'update_or_create(defaults=None)' },
        { headingPath: 'API > update_or_create()', text: `A convenience method for updating an object. ${long('word')}` },
      ],
      200,
    );
    expect(merged).toHaveLength(1);
    expect(merged[0]!.headingPath).toBe('API > update_or_create()');
    expect(merged[0]!.text).toMatch(/^update_or_create\(defaults=None\)\n\nA convenience method/);
  });

  it('puts a dropped heading before a piece whose text does not start with it', () => {
    const [merged] = mergeSmallPieces(
      [
        { headingPath: 'Guide > Install', text: 'Two ways.' },
        { headingPath: 'Guide > Install > From source', text: long('step') },
      ],
      200,
    );
    expect(merged!.headingPath).toBe('Guide > Install');
    expect(merged!.text).toBe(`Two ways.\n\nFrom source\n\n${long('step')}`);
  });

  it("joins a section's short last piece to the piece before it without repeating the splitter's overlap", () => {
    const overlap = 'the overlap both pieces hold';
    const first = `${long('alpha')} ${overlap}`;
    const merged = mergeSmallPieces(
      [
        { headingPath: 'Doc > Part', text: first },
        { headingPath: 'Doc > Part', text: `${overlap} and the end.` },
        { headingPath: 'Doc > Next', text: long('beta') },
      ],
      200,
    );
    expect(merged.map((piece) => piece.headingPath)).toEqual(['Doc > Part', 'Doc > Next']);
    expect(merged[0]!.text).toBe(`${first} and the end.`);
  });

  it('joins a small last piece of the document to the one before it, and keeps pieces at or above the minimum as they are', () => {
    const pieces = [
      { headingPath: 'A', text: long('a') },
      { headingPath: 'B', text: long('b') },
      { headingPath: 'C', text: 'See also A.' },
    ];
    const merged = mergeSmallPieces(pieces, 200);
    expect(merged.map((piece) => piece.headingPath)).toEqual(['A', 'B']);
    expect(merged[1]!.text).toBe(`${long('b')}\n\nC\n\nSee also A.`);
    expect(mergeSmallPieces(pieces, 5)).toEqual(pieces);
  });

  it('carries the pages of both parts', () => {
    const [merged] = mergeSmallPieces(
      [
        { headingPath: 'A', text: 'Short.', pages: [3] },
        { headingPath: 'A > B', text: long('b'), pages: [3, 4] },
      ],
      100,
    );
    expect(merged!.pages).toEqual([3, 4]);
  });
});

describe('chunkMarkdown with minChars', () => {
  const markdown = `# Guide\n\n## Signature\n\nf(x)\n\n## Details\n\n${long('detail', 40)}\n`;

  it('keeps the Python pipeline boundaries without it, and merges the tiny section with it (ids renumbered)', () => {
    const seed = chunkMarkdown(markdown, 'guide.md', { chunkSize: 1200, chunkOverlap: 200 });
    expect(seed.map((chunk) => chunk.headingPath)).toEqual(['Guide > Signature', 'Guide > Details']);
    const merged = chunkMarkdown(markdown, 'guide.md', { chunkSize: 1200, chunkOverlap: 200, minChars: 100 });
    expect(merged).toHaveLength(1);
    expect(merged[0]!.chunkIndex).toBe(0);
    expect(merged[0]!.headingPath).toBe('Guide');
    expect(merged[0]!.text).toMatch(/^guide\.md > Guide\n\nSignature\n\nf\(x\)\n\nDetails\n\ndetail0/);
  });
});

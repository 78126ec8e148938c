import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import { prefixChunkText } from '../../src/chunking/prefix.ts';

interface GoldenChunk {
  heading_path: string;
  text: string;
}
interface GoldenCase {
  name: string;
  input: string;
  chunks_1200_200: GoldenChunk[];
  chunks_100_20: GoldenChunk[];
}

const golden = JSON.parse(
  readFileSync(new URL('../fixtures/chunking/markdown_split_golden.json', import.meta.url), 'utf8'),
) as { cases: GoldenCase[] };

const SIZES = [
  { key: 'chunks_1200_200', chunkSize: 1200, chunkOverlap: 200 },
  { key: 'chunks_100_20', chunkSize: 100, chunkOverlap: 20 },
] as const;

const indentReturns = (text: string): string => text.replace(/(^|\n)return/g, '$1    return');

/** Deliberate differences (DIFFERENCES.md): our intended chunks, derived from the golden where only indentation differs. */
const INTENDED: Record<string, (goldenChunks: GoldenChunk[]) => GoldenChunk[]> = {
  code_fence_with_hash_lines: () => [
    { heading_path: 'T', text: '```bash\n# not a header\n\n    indented line\n```\nafter fence' },
  ],
  fence_closed_by_longer_line: () => [{ heading_path: '', text: '```\ncode\n```python trailing\n# H\nx' }],
  code_block_with_blank_lines: (chunks) => chunks.map((c) => ({ ...c, text: indentReturns(c.text) })),
};

describe('chunkMarkdown against LangChain (markdown_split_golden.json)', () => {
  for (const goldenCase of golden.cases) {
    for (const { key, chunkSize, chunkOverlap } of SIZES) {
      it(`${goldenCase.name} at ${chunkSize}/${chunkOverlap}`, () => {
        const expected = INTENDED[goldenCase.name]?.(goldenCase[key]) ?? goldenCase[key];
        const chunks = chunkMarkdown(goldenCase.input, 'case.md', { chunkSize, chunkOverlap });
        expect(chunks).toEqual(
          expected.map((c, chunkIndex) => ({
            id: chunkId('case.md', chunkIndex),
            source: 'case.md',
            headingPath: c.heading_path,
            chunkIndex,
            text: prefixChunkText('case.md', c.heading_path, c.text),
          })),
        );
      });
    }
  }
});

describe('prefix and id', () => {
  it('prefixes with the heading path, or the source alone when there is none', () => {
    expect(prefixChunkText('a.md', 'A > B', 'x')).toBe('a.md > A > B\n\nx');
    expect(prefixChunkText('a.md', '', 'x')).toBe('a.md\n\nx');
    expect(prefixChunkText('a.md', ' > B', 'x')).toBe('a.md >  > B\n\nx');
  });

  it('is uuid5(NAMESPACE_URL, "<source>#<index>") as in Python', () => {
    expect(chunkId('README.md', 0)).toBe('08bb0ea1-f68f-5b6f-a616-28e943076d08');
  });

  it('restarts chunk_index per document and counts across sections', () => {
    const chunks = chunkMarkdown('# A\na\n# B\nb', 'x.md', { chunkSize: 1200, chunkOverlap: 200 });
    expect(chunks.map((c) => [c.chunkIndex, c.headingPath])).toEqual([[0, 'A'], [1, 'B']]);
  });

  it('keeps code indentation without moving chunk boundaries', () => {
    const chunks = chunkMarkdown('# Y\n```yaml\na:\n  b: 1\n  c: 2\n```\n', 'y.md', { chunkSize: 12, chunkOverlap: 4 });
    expect(chunks.map((c) => c.text)).toEqual(['y.md > Y\n\n```yaml\na:', 'y.md > Y\n\na:\n  b: 1', 'y.md > Y\n\n  c: 2\n```']);
  });
});

/** `<repo>/../shared`: licensed data we read but never copy into the repo. */
const repoRoot = new URL('../../../../', import.meta.url);
const corpus = fileURLToPath(new URL('../shared/corpora/vllm-gke', repoRoot));
const chunksFile = fileURLToPath(new URL('../shared/reference/vllm-gke-chunks.jsonl', repoRoot));
const haveCorpus = existsSync(corpus) && existsSync(chunksFile);
if (!haveCorpus) console.warn(`skipping vllm-gke chunk golden: ${corpus} or ${chunksFile} not found (../shared is not checked out)`);

interface CorpusChunk {
  source: string;
  chunk_index: number;
  heading_path: string;
  id: string;
  text_as_prefixed: string;
}

function markdownFiles(root: string): string[] {
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' });
  return files.filter((f) => /\.(md|markdown)$/i.test(f)).sort();
}

const withoutLineIndent = (text: string): string => text.replace(/^[ \t]+/gm, '');

/** Our chunks repeat a cut table's header rows at their top (DIFFERENCES.md); LangChain's do not. */
function withoutCarriedTableHeader(got: string, want: string): string {
  const bodyStart = want.indexOf('\n\n') + 2;
  const [gotBody, wantBody] = [got.slice(bodyStart), want.slice(bodyStart)];
  const carried = gotBody.split('\n').slice(0, 2).join('\n');
  return carried.startsWith('|') && gotBody === `${carried}\n${wantBody}` ? want : got;
}

describe('vllm-gke corpus chunks', () => {
  it.skipIf(!haveCorpus)('match the 81 Python chunks, but for kept code indentation and carried table headers', () => {
    const expected = readFileSync(chunksFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as CorpusChunk);
    const ours = markdownFiles(corpus).flatMap((source) =>
      chunkMarkdown(readFileSync(`${corpus}/${source}`, 'utf8'), source, { chunkSize: 1200, chunkOverlap: 200 }),
    );
    expect(ours).toHaveLength(81);
    let exact = 0;
    let carriedHeaders = 0;
    expected.forEach((want, i) => {
      const got = ours[i];
      expect([got?.source, got?.chunkIndex, got?.headingPath, got?.id]).toEqual([want.source, want.chunk_index, want.heading_path, want.id]);
      const text = withoutCarriedTableHeader(got?.text ?? '', want.text_as_prefixed);
      if (text !== got?.text) carriedHeaders += 1;
      if (!want.text_as_prefixed.includes('```')) expect(text).toBe(want.text_as_prefixed);
      else expect(withoutLineIndent(text)).toBe(withoutLineIndent(want.text_as_prefixed));
      if (got?.text === want.text_as_prefixed) exact += 1;
    });
    console.info(`vllm-gke: ${exact} of ${expected.length} chunks byte-equal; ${carriedHeaders} carry their table's header, the rest differ only in code indentation`);
    expect(carriedHeaders).toBe(2);
    expect(exact).toBe(65);
  });
});

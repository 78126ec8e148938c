import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { splitMarkdownLayouts, splitMarkdownSections } from '../../src/chunking/markdown-sections.ts';

interface GoldenSection {
  metadata: Record<string, string>;
  page_content: string;
}
interface GoldenCase {
  name: string;
  input: string;
  sections: GoldenSection[];
}

const golden = JSON.parse(
  readFileSync(new URL('../fixtures/chunking/markdown_split_golden.json', import.meta.url), 'utf8'),
) as { cases: GoldenCase[] };

const headingPathOf = (metadata: Record<string, string>): string =>
  ['h1', 'h2', 'h3'].flatMap((h) => (h in metadata ? [metadata[h]] : [])).join(' > ');

/** Cases where we deliberately differ from LangChain (DIFFERENCES.md), with our intended sections. */
const INTENDED: Record<string, { headingPath: string; text: string }[]> = {
  code_fence_with_hash_lines: [
    { headingPath: 'T', text: '```bash\n# not a header\n\n    indented line\n```\nafter fence' },
  ],
  fence_closed_by_longer_line: [{ headingPath: '', text: '```\ncode\n```python trailing\n# H\nx' }],
  code_block_with_blank_lines: [
    {
      headingPath: 'Code',
      text: '```python\n' + Array.from({ length: 80 }, (_, i) => `def f${i}(x):\n    return x + ${i}`).join('\n\n') + '\n```',
    },
  ],
};

describe('splitMarkdownSections against LangChain (markdown_split_golden.json)', () => {
  for (const goldenCase of golden.cases) {
    it(goldenCase.name, () => {
      const expected =
        INTENDED[goldenCase.name] ??
        goldenCase.sections.map((s) => ({ headingPath: headingPathOf(s.metadata), text: s.page_content }));
      expect(splitMarkdownSections(goldenCase.input)).toEqual(expected);
    });
  }

  it('keeps LangChain page_content underneath every case where only code indentation differs', () => {
    for (const name of ['code_fence_with_hash_lines', 'code_block_with_blank_lines']) {
      const goldenCase = golden.cases.find((c) => c.name === name);
      const layouts = splitMarkdownLayouts(goldenCase?.input ?? '');
      expect(layouts.map((l) => l.langchainText)).toEqual(goldenCase?.sections.map((s) => s.page_content));
    }
  });
});

describe('CommonMark decides headings and fences (deliberate differences)', () => {
  const cases: [string, string, { headingPath: string; text: string }[]][] = [
    ['a # line indented 4+ spaces is not a heading', '# A\ntext\n    # not heading', [{ headingPath: 'A', text: 'text\n# not heading' }]],
    ['a # line in an HTML comment is not a heading', '# A\n<!--\n# hidden\n-->\nx', [{ headingPath: 'A', text: '<!--\n# hidden\n-->\nx' }]],
    ['closing #s are not part of the heading', '## Title ##\nbody', [{ headingPath: 'Title', text: 'body' }]],
    ['a tab after # still makes a heading', '#\tTab\nbody', [{ headingPath: 'Tab', text: 'body' }]],
    ['a shorter fence does not close a longer one', '````\n```\n# in\n````\ny', [{ headingPath: '', text: '````\n```\n# in\n````\ny' }]],
    ['code indentation is relative to the fence', '- l\n\n  ~~~yaml\n  k:\n    v: 1\n  ~~~', [{ headingPath: '', text: '- l  \n~~~yaml\nk:\n  v: 1\n~~~' }]],
    ['headings in quotes and setext headings stay text, as in LangChain', '> # q\n\nT\n=', [{ headingPath: '', text: '> # q  \nT\n=' }]],
  ];
  for (const [name, markdown, expected] of cases) {
    it(name, () => expect(splitMarkdownSections(markdown)).toEqual(expected));
  }
});

/** `<repo>/../shared`: licensed data we read but never copy into the repo. */
const repoRoot = new URL('../../../../', import.meta.url);
const corpus = fileURLToPath(new URL('../shared/corpora/vllm-gke', repoRoot));
const sectionsFile = fileURLToPath(new URL('../shared/reference/vllm-gke-sections.jsonl', repoRoot));
const haveCorpus = existsSync(corpus) && existsSync(sectionsFile);
if (!haveCorpus) console.warn(`skipping vllm-gke section golden: ${corpus} or ${sectionsFile} not found (../shared is not checked out)`);

describe('vllm-gke corpus sections', () => {
  it.skipIf(!haveCorpus)('LangChain page_content is reproduced exactly for all 72 sections', () => {
    const golden = readFileSync(sectionsFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as {
      source: string;
      heading_path: string;
      page_content: string;
    });
    const sources = [...new Set(golden.map((s) => s.source))];
    const ours = sources.flatMap((source) =>
      splitMarkdownLayouts(readFileSync(`${corpus}/${source}`, 'utf8')).map((l) => ({
        source,
        heading_path: l.headingPath,
        page_content: l.langchainText,
      })),
    );
    expect(ours).toHaveLength(72);
    expect(ours).toEqual(golden.map(({ source, heading_path, page_content }) => ({ source, heading_path, page_content })));
  });
});

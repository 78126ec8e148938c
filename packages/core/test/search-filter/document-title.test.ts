import { describe, expect, it } from 'vitest';
import { documentTitle } from '../../src/search-filter/document-title.ts';

describe('documentTitle', () => {
  it('takes the first level-1 heading of the Markdown, outside code fences, without emphasis marks', () => {
    expect(documentTitle('docs/a.md', '```\n# not a title\n```\n\n## Intro\n\n# The *real* title #\n\n# Second')).toBe('The real title');
  });

  it("takes an HTML file's <title>, entities decoded, before its first heading", () => {
    const html = Buffer.from('<html><head><title>\n  Rollback &amp; recovery &#8212; Guide\n</title></head><body><h1>Other</h1></body></html>');
    expect(documentTitle('site/page.HTML', '# Other', html)).toBe('Rollback & recovery — Guide');
  });

  it('falls back to the file name: no H1 (a PDF read as text, an HTML page without a title)', () => {
    expect(documentTitle('gs://bucket/reports/q3-summary.pdf', 'Revenue grew.\n\n## Details')).toBe('q3-summary.pdf');
    expect(documentTitle('site/x.html', 'text', Buffer.from('<p>no head</p>'))).toBe('x.html');
    expect(documentTitle('a/b.md', '#   \n#hashtag')).toBe('b.md');
  });
});

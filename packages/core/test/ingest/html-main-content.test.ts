import { describe, expect, it } from 'vitest';
import { htmlToDocument } from '../../src/converters/html.ts';

/** The lines of the converted page that are text (its headings are in `structure`, listed by `headings`). */
const textOf = (html: string) => htmlToDocument(html).markdown;
const headings = (html: string) => htmlToDocument(html).structure!.headings.map((heading) => heading.text);

const prose = (words: number) => Array.from({ length: words }, (_, index) => `word${index}`).join(' ');
const article = `<h1>Rotating keys</h1><p>Keys are rotated every ninety days. ${prose(200)}</p>`;

describe('main content: what HTML and ARIA say is not content', () => {
  it('leaves out nav, aside, the page header and footer, landmark roles, hidden elements, scripts and search boxes', () => {
    const text = textOf(`<html><head><title>Keys</title><style>p{}</style></head><body>
      <header><a href="/">Acme docs</a> Internal handbook</header>
      <nav><a href="a.html">Alpha</a></nav><div role="navigation">Sections: <a href="b.html">Beta</a></div>
      <div role="search"><input name="q"> Search the docs</div><aside>Was this page helpful?</aside>
      <div hidden>Hidden draft</div><div style="display: none">Collapsed menu</div><div aria-hidden="true">Decoration</div>
      <script>track("page")</script><form action="/search"><input type="text"><button>Go</button></form>
      ${article}<footer>© 2026 Acme Corp</footer></body></html>`);
    expect(text).toContain('Keys are rotated every ninety days.');
    expect(text).not.toMatch(/Acme docs|Internal handbook|Alpha|Beta|Search the docs|helpful|Hidden draft|Collapsed menu|Decoration|track|Go\b|© 2026/);
  });

  it('keeps a form with text of its own (a procedure around its fields), leaving out only its controls', () => {
    const procedure = 'Before you request a new signing key, revoke the old one in the console and note its fingerprint. '.repeat(3);
    const text = textOf(`<body><main>${article}<form action="/keys/request"><h2>Requesting a key</h2><p>${procedure}</p><label>Team <input name="team"></label><button>Send the request</button></form></main></body>`);
    expect(procedure.trim().length).toBeGreaterThan(200);
    expect(text).toContain('Before you request a new signing key, revoke the old one');
    expect(text).not.toContain('Send the request');
  });

  it("keeps an article's own header and footer", () => {
    const text = textOf(`<body><article><header><h1>Rotating keys</h1><p>By the platform team</p></header><p>${prose(50)}</p><footer>Reviewed in May</footer></article></body>`);
    expect(text).toContain('By the platform team');
    expect(text).toContain('Reviewed in May');
  });

  it('takes the page\'s <main> (or role="main") when it has one, and nothing outside it', () => {
    // Outside it, more text than narrowing would ever leave out.
    const text = textOf(`<body><div class="top">Welcome to the portal, where teams share news. ${prose(80)}</div><div role="main">${article}</div><div>Portal team, building 4</div></body>`);
    expect(text).toContain('Keys are rotated');
    expect(text).not.toMatch(/Welcome to the portal|building 4/);
  });

  it('narrows a page without <main> to the container of nearly all its text, when what it leaves holds no heading', () => {
    const page = `<body><div>Acme intranet, internal use only</div><div class="page">${article}</div><div>Questions? Call 555-0100</div></body>`;
    expect(textOf(page)).not.toMatch(/Acme intranet|555-0100/);
    // A heading outside the container is the page's: nothing is left out then.
    const titled = `<body><div><h2>Key management</h2></div><div class="page">${article}</div></body>`;
    expect(headings(titled)).toContain('Key management');
  });

  it('does not narrow to a container holding most but not nearly all of the text: what lies beside it is kept', () => {
    // The container holds about 85% of the text outside links, short of the 90% that makes it the content.
    const page = `<body><div class="page">${article}</div><div>Escalations go to the on-call security lead first. ${prose(30)}</div></body>`;
    const text = textOf(page);
    expect(text).toContain('Keys are rotated every ninety days.');
    expect(text).toContain('Escalations go to the on-call security lead first.');
  });

  it('takes an <article> only when it holds at least half of the body\'s text, not a small one beside the content', () => {
    const teaser = '<article class="teaser"><h3>Also new</h3><p>Backups now run hourly.</p></article>';
    const text = textOf(`<body><div class="content">${article}${teaser}</div></body>`);
    expect(text).toContain('Keys are rotated every ninety days.');
    // An article holding most of the page is the content, and what lies beside it is not.
    const inArticle = textOf(`<body><div>Portal news: the canteen closes at three. ${prose(20)}</div><article>${article}</article></body>`);
    expect(inArticle).toContain('Keys are rotated every ninety days.');
    expect(inArticle).not.toContain('Portal news');
  });
});

describe('main content: navigation inside the content', () => {
  it('leaves out blocks named as navigation, and header or footer blocks holding links but no heading', () => {
    const text = textOf(`<body><div class="navheader"><a href="prev.html">Prev</a> Chapter 4. Security <a href="next.html">Next</a></div>
      <div class="doc">${article}<div class="sidebar-box">Related reading for admins</div><ul class="breadcrumbs"><li>Docs</li></ul></div>
      <div class="page-footer"><a href="prev.html">Prev</a> 4.1 Passwords</div></body>`);
    expect(text).not.toMatch(/Prev|Chapter 4\. Security|Related reading|Docs\b|4\.1 Passwords/);
    // A "header" holding the page's heading is its title area.
    expect(headings(`<body><div class="header"><a href="pkg.html">Package keys</a><h2>Class KeyStore</h2></div><p>${prose(40)}</p></body>`)).toContain('Class KeyStore');
  });

  it("keeps a section whose id is the slug of its own title, whatever words the title has (Sphinx's s-select-related)", () => {
    const section = (id: string, title: string) => `<div class="section" id="${id}"><h2>${title}</h2><p>${prose(30)} about ${title}.</p></div>`;
    const html = `<body><main><h1>QuerySet API</h1>${section('s-select-related', 'select_related()')}${section('related-objects', 'Related objects')}
      <div id="related"><h3>See also</h3><a href="a.html">One</a> <a href="b.html">Two</a></div></main></body>`;
    expect(headings(html)).toEqual(['QuerySet API', 'select_related()', 'Related objects']);
  });

  it('leaves out boxes of links with hardly any other text, and permalink and back-to-top anchors', () => {
    const html = `<body><main><h1 id="keys">Rotating keys<a class="headerlink" href="#keys">¶</a></h1>
      <div class="toc"><a href="#a">Why</a> <a href="#b">How</a> <a href="#c">When</a></div>
      <p>Rotate with <a href="cli.html#rotate">the rotate command</a>, see <a href="#how">below</a>. ${prose(60)}</p>
      <p><a href="#top"><img src="up.gif" alt="top"></a></p></main></body>`;
    const text = textOf(html);
    expect(headings(html)).toEqual(['Rotating keys']);
    expect(text).not.toMatch(/¶|Why|How\b|When|\btop\b/);
    expect(text).toContain('Rotate with the rotate command, see below.');
  });

  it('never leaves out a block holding most of the content, however many links it has', () => {
    const links = Array.from({ length: 5 }, (_, index) => `<a href="p${index}.html">step ${index} of the rotation</a>`).join(' then ');
    expect(textOf(`<body><main><h1>Runbook</h1><p>${links}.</p></main></body>`)).toContain('step 0 of the rotation then step 1');
  });
});

describe('link lists (tables of contents, indexes)', () => {
  const entries = Array.from({ length: 30 }, (_, index) => `<li><a href="page${index}.html">Chapter ${index}: topic ${index}</a></li>`).join('');
  const contents = `<html><head><title>Contents</title></head><body><main><h1>Handbook contents</h1><p>Every chapter.</p><ul>${entries}</ul></main></body></html>`;

  it('are told apart and, by default, indexed with their headings and own text only', () => {
    const converted = htmlToDocument(contents);
    expect(converted.linkList).toEqual({ links: 30, indexedLightly: true });
    expect(converted.markdown).toContain('Every chapter.');
    expect(converted.markdown).not.toContain('Chapter 3: topic 3');
  });

  it('keep their links as a list with INGEST_LINK_PAGES=full', () => {
    const converted = htmlToDocument(contents, { linkPages: 'full' });
    expect(converted.linkList).toEqual({ links: 30, indexedLightly: false });
    expect(converted.markdown).toContain('* Chapter 3: topic 3');
  });

  it('with nothing but headings left, become one paragraph of their headings, so that the page is still indexed', () => {
    const converted = htmlToDocument(`<body><main><h1>Index</h1><h2>A</h2><ul>${entries}</ul><h2>B</h2></main></body>`);
    expect(converted.markdown.trim().split('\n').at(-1)).toBe('Index · A · B');
  });

  it('do not take in an ordinary page with a few links', () => {
    expect(htmlToDocument(`<body><main>${article}<p><a href="a.html">one</a> <a href="b.html">two</a></p></main></body>`).linkList).toBeUndefined();
  });
});

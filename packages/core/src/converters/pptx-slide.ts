/**
 * Text of one slide from fast-xml-parser's ordered output (`preserveOrder`): each node is
 * `{ [tag]: children, ':@'?: attributes }`, text nodes are `{ '#text': value }`.
 */
export type XmlNode = Record<string, unknown>;

const TITLE_PLACEHOLDERS = new Set(['title', 'ctrTitle']);

export interface SlideText {
  title: string;
  /** Paragraphs and tables as Markdown blocks, in reading order. */
  body: string[];
}

export function slideText(slide: XmlNode[]): SlideText {
  const titles: string[] = [];
  const body: string[] = [];
  for (const shape of shapesOf(slide)) {
    if (tagOf(shape) === 'p:graphicFrame') {
      const table = tableMarkdown(shape);
      if (table) body.push(table);
    } else if (isTitle(shape)) {
      titles.push(paragraphsOf(shape).join(' '));
    } else {
      body.push(...paragraphsOf(shape));
    }
  }
  return { title: titles.join(' ').trim(), body };
}

/** Every node with this tag, at any depth, in document order. */
export function childrenOf(nodes: XmlNode[], tag: string): XmlNode[] {
  const found: XmlNode[] = [];
  for (const node of nodes) {
    const name = tagOf(node);
    if (name === tag) found.push(node);
    else if (name !== undefined) found.push(...childrenOf(contentOf(node), tag));
  }
  return found;
}

/** Text shapes and graphic frames (tables), groups flattened, in z-order (what PowerPoint reads first). */
function shapesOf(nodes: XmlNode[]): XmlNode[] {
  const shapes: XmlNode[] = [];
  for (const node of nodes) {
    const name = tagOf(node);
    if (name === 'p:sp' || name === 'p:graphicFrame') shapes.push(node);
    else if (name !== undefined && name !== '#text') shapes.push(...shapesOf(contentOf(node)));
  }
  return shapes;
}

function isTitle(shape: XmlNode): boolean {
  return childrenOf(contentOf(shape), 'p:ph').some((placeholder) => {
    const type = (placeholder[':@'] as Record<string, string> | undefined)?.['@_type'];
    return type !== undefined && TITLE_PLACEHOLDERS.has(type);
  });
}

function paragraphsOf(node: XmlNode): string[] {
  return childrenOf(contentOf(node), 'a:p')
    .map((paragraph) => paragraphText(paragraph).trim())
    .filter((text) => text !== '');
}

/** Runs (`a:r`), fields (`a:fld`) and line breaks (`a:br`) of one paragraph. */
function paragraphText(paragraph: XmlNode): string {
  let text = '';
  for (const child of contentOf(paragraph)) {
    const name = tagOf(child);
    if (name === 'a:br') text += '\n';
    else if (name === 'a:r' || name === 'a:fld') text += childrenOf(contentOf(child), 'a:t').map(textOf).join('');
  }
  return text;
}

function tableMarkdown(frame: XmlNode): string | undefined {
  const rows = childrenOf(contentOf(frame), 'a:tr').map((row) =>
    childrenOf(contentOf(row), 'a:tc').map((cell) => paragraphsOf(cell).join(' ').replace(/\s+/g, ' ')),
  );
  const [header, ...rest] = rows;
  if (!header) return undefined;
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rest.map(line)].join('\n');
}

function textOf(node: XmlNode): string {
  return contentOf(node)
    .map((child) => (typeof child['#text'] === 'string' || typeof child['#text'] === 'number' ? String(child['#text']) : ''))
    .join('');
}

function tagOf(node: XmlNode): string | undefined {
  return Object.keys(node).find((key) => key !== ':@');
}

function contentOf(node: XmlNode): XmlNode[] {
  const name = tagOf(node);
  const content = name === undefined ? undefined : node[name];
  return Array.isArray(content) ? (content as XmlNode[]) : [];
}

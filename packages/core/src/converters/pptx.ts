import { XMLParser } from 'fast-xml-parser';
import type JSZip from 'jszip';
import type { Converter, ConvertedDocument, DocumentStructure, PageStart } from './converter.ts';
import { joinPages, type PageMarkdown } from './paged-markdown.ts';
import { unreadable } from './unreadable.ts';
import { childrenOf, slideText, type XmlNode } from './pptx-slide.ts';
import { DEFAULT_ZIP_LIMITS, openZipWithinLimits, type ZipLimits } from './zip-limits.ts';

const parser = new XMLParser({ preserveOrder: true, ignoreAttributes: false, trimValues: false, parseTagValue: false });

/**
 * PowerPoint decks read from their slide XML (ECMA-376 PresentationML): one `##` section per slide,
 * headed by the slide's title placeholder, in the order the presentation shows them; each slide's
 * number (its position in that order, as PowerPoint numbers it) is kept for citations. The structure is
 * given with the text, so a line of a slide that starts with `#` is never read as a heading.
 */
export class PptxConverter implements Converter {
  readonly extensions = ['pptx'] as const;
  readonly offThread = true;
  readonly pagedExtensions = ['pptx'] as const;

  constructor(private readonly limits: ZipLimits = DEFAULT_ZIP_LIMITS) {}

  async toMarkdown(bytes: Buffer): Promise<string> {
    return (await this.toPagedMarkdown(bytes)).markdown;
  }

  async toPagedMarkdown(bytes: Buffer): Promise<ConvertedDocument> {
    if (bytes.length === 0) throw unreadable('empty file');
    const zip = await openZipWithinLimits(bytes, 'PPTX', this.limits);
    if (!zip.file('ppt/presentation.xml')) throw unreadable('not a PPTX: no ppt/presentation.xml');
    const slidePaths = await slidesInOrder(zip);
    const slides: PageMarkdown[] = [];
    for (const [position, path] of slidePaths.entries()) {
      const xml = await zip.file(path)?.async('string');
      if (xml === undefined) continue;
      const { title, body } = slideText(parser.parse(xml) as XmlNode[]);
      slides.push({ page: position + 1, markdown: [`## ${title || `Slide ${position + 1}`}`, ...body].join('\n\n') });
    }
    const deck = joinPages(slides);
    return { ...deck, structure: slideHeadings(deck.markdown, deck.pages ?? []) };
  }
}

/** Each slide starts with its title line: the heading of its section. */
function slideHeadings(markdown: string, pages: readonly PageStart[]): DocumentStructure {
  const lines = markdown.split('\n');
  const lineStarts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    lineStarts.push(offset);
    offset += line.length + 1;
  }
  const headings = pages.map(({ offset: start }) => {
    const line = lineStarts.indexOf(start);
    return { line, level: 1, text: lines[line]!.replace(/^## /, '') };
  });
  return { headings, codeBlocks: [] };
}

/** Slide parts in presentation order: presentation.xml lists slide ids whose relationships name the parts. */
async function slidesInOrder(zip: JSZip): Promise<string[]> {
  const presentation = parser.parse((await zip.file('ppt/presentation.xml')?.async('string')) ?? '') as XmlNode[];
  const relations = parser.parse((await zip.file('ppt/_rels/presentation.xml.rels')?.async('string')) ?? '') as XmlNode[];
  const targetById = new Map<string, string>();
  for (const relation of childrenOf(relations, 'Relationship')) {
    const attributes = relation[':@'] as Record<string, string> | undefined;
    if (attributes?.['@_Id'] && attributes['@_Target']) targetById.set(attributes['@_Id'], attributes['@_Target']);
  }
  const ordered = childrenOf(presentation, 'p:sldId')
    .map((slide) => targetById.get((slide[':@'] as Record<string, string> | undefined)?.['@_r:id'] ?? ''))
    .filter((target): target is string => target !== undefined)
    .map((target) => `ppt/${target.replace(/^\/?ppt\//, '').replace(/^\.\//, '')}`);
  return ordered.length > 0 ? ordered : numberedSlides(zip);
}

function numberedSlides(zip: JSZip): string[] {
  const number = (path: string) => Number(/slide(\d+)\.xml$/.exec(path)?.[1] ?? 0);
  return Object.keys(zip.files)
    .filter((path) => /^ppt\/slides\/slide\d+\.xml$/.test(path))
    .sort((a, b) => number(a) - number(b));
}

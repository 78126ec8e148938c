import mammoth from 'mammoth';
import type { Converter, ConvertedDocument } from './converter.ts';
import { htmlToDocument } from './html.ts';
import { reasonOf, unreadable } from './unreadable.ts';
import { DEFAULT_ZIP_LIMITS, openZipWithinLimits, type ZipLimits } from './zip-limits.ts';

/** Pictures carry no text to search; mammoth's default would inline them as base64 into every chunk. */
const dropImages = mammoth.images.imgElement(async () => ({ src: '' }));

/**
 * Word documents through mammoth's semantic HTML (Heading 1–6 styles become h1–h6), then the HTML
 * converter's clean text and structure (all of it content: a Word document has no site navigation).
 */
export class DocxConverter implements Converter {
  readonly extensions = ['docx'] as const;
  readonly offThread = true;

  constructor(private readonly limits: ZipLimits = DEFAULT_ZIP_LIMITS) {}

  async toMarkdown(bytes: Buffer): Promise<string> {
    return (await this.toPagedMarkdown(bytes)).markdown;
  }

  async toPagedMarkdown(bytes: Buffer): Promise<ConvertedDocument> {
    if (bytes.length === 0) throw unreadable('empty file');
    // mammoth inflates the parts it reads with no limit: the archive is checked first.
    await openZipWithinLimits(bytes, 'DOCX', this.limits);
    let html: string;
    try {
      ({ value: html } = await mammoth.convertToHtml({ buffer: bytes }, { convertImage: dropImages }));
    } catch (error) {
      throw unreadable(`not a readable DOCX: ${reasonOf(error)}`, error);
    }
    return htmlToDocument(html, { mainContentOnly: false });
  }
}

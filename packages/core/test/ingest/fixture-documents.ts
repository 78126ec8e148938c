import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import PDFDocument from 'pdfkit';
import pptxgenjs from 'pptxgenjs';

// Its types describe a CommonJS module; its ES build, which Node loads here, exports the class as default.
const PptxGenJS = pptxgenjs as unknown as typeof pptxgenjs.default;

/** Office and PDF documents generated at test time, so the repository ships no binaries. */

/** A 2×2 black PNG: a picture with no text in it. */
const PICTURE = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAAAAABX3VL4AAAADklEQVR4nGNgYGBgYAAAAAUAAXpeqz8AAAAASUVORK5CYII=',
  'base64',
);

export function pdfWithText(pages: string[]): Promise<Buffer> {
  return renderPdf((document) => {
    pages.forEach((text, index) => {
      if (index > 0) document.addPage();
      document.fontSize(12).text(text);
    });
  });
}

/** A scan: one page holding a picture and no text layer. */
export function imageOnlyPdf(): Promise<Buffer> {
  return renderPdf((document) => {
    document.image(PICTURE, 50, 50, { width: 200 });
  });
}

/** A valid PDF whose only page is blank. */
export function blankPdf(): Promise<Buffer> {
  return renderPdf(() => {});
}

/** Starts like a PDF, then is not one. */
export function corruptPdf(): Buffer {
  return Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >>\nthis file was cut short');
}

function renderPdf(draw: (document: PDFKit.PDFDocument) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const document = new PDFDocument({ compress: false, info: { CreationDate: new Date(0) } });
    const parts: Buffer[] = [];
    document.on('data', (part: Buffer) => parts.push(part));
    document.on('end', () => resolve(Buffer.concat(parts)));
    document.on('error', reject);
    draw(document);
    document.end();
  });
}

export function docxDocument(): Promise<Buffer> {
  const document = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'Release handbook', heading: HeadingLevel.HEADING_1 }),
          new Paragraph('How a release is cut and shipped.'),
          new Paragraph({ text: 'Freezing the branch', heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ children: [new TextRun('Freeze the '), new TextRun({ text: 'release branch', bold: true }), new TextRun(' two days before.')] }),
          new Paragraph({ text: 'Run the smoke tests', bullet: { level: 0 } }),
          new Table({
            rows: [
              new TableRow({ children: [new TableCell({ children: [new Paragraph('stage')] }), new TableCell({ children: [new Paragraph('owner')] })] }),
              new TableRow({ children: [new TableCell({ children: [new Paragraph('freeze')] }), new TableCell({ children: [new Paragraph('release manager')] })] }),
            ],
          }),
        ],
      },
    ],
  });
  return Packer.toBuffer(document);
}

export async function pptxDeck(): Promise<Buffer> {
  const deck = new PptxGenJS();
  deck.defineSlideMaster({
    title: 'TITLED',
    objects: [{ placeholder: { options: { name: 'title', type: 'title', x: 0.5, y: 0.3, w: 9, h: 1 }, text: '' } }],
  });
  const first = deck.addSlide({ masterName: 'TITLED' });
  first.addText('Quarterly roadmap', { placeholder: 'title' });
  first.addText('Ship the ingestion job', { x: 0.5, y: 1.5, w: 9, h: 1 });
  const second = deck.addSlide({ masterName: 'TITLED' });
  second.addText('Risks & mitigations', { placeholder: 'title' });
  second.addTable([[{ text: 'risk' }, { text: 'mitigation' }], [{ text: 'GCS outage' }, { text: 'retry next run' }]], { x: 0.5, y: 1.5, w: 9 });
  const untitled = deck.addSlide();
  untitled.addText('A slide without a title', { x: 0.5, y: 1.5, w: 9, h: 1 });
  return (await deck.write({ outputType: 'nodebuffer' })) as Buffer;
}

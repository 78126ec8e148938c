/**
 * The audit's PDF (issue 43, finding 3): a valid one-page PDF whose page content is a FlateDecode stream that
 * inflates far past its size: one line of text, then spaces, which deflate packs ~1000:1 (1.8 MB on disk for
 * 1.8 GB inflated). Deflated a MiB at a time through zlib's streaming API, so making it holds the compressed
 * stream and one chunk, never the inflated size. bench/probes/inflating-pdf.ts writes one to disk.
 */
import { once } from 'node:events';
import { createDeflate } from 'node:zlib';

export async function inflatingPdf(inflatedMiB: number): Promise<Buffer> {
  const compressed: Buffer[] = [];
  const deflate = createDeflate({ level: 9 });
  deflate.on('data', (chunk: Buffer) => compressed.push(chunk));
  const ended = once(deflate, 'end');
  deflate.write('BT /F1 12 Tf 72 720 Td (A page whose content stream inflates far past its size.) Tj ET\n');
  const spaces = Buffer.alloc(1024 * 1024, 0x20);
  for (let mib = 0; mib < inflatedMiB; mib += 1) {
    if (!deflate.write(spaces)) await once(deflate, 'drain');
  }
  deflate.end();
  await ended;
  const stream = Buffer.concat(compressed);

  const objects: (string | Buffer)[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    Buffer.concat([Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, Buffer.from('\nendstream')]),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  let offset = parts[0]!.length;
  const offsets: number[] = [];
  for (const [index, object] of objects.entries()) {
    offsets.push(offset);
    const part = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`), Buffer.from(object), Buffer.from('\nendobj\n')]);
    parts.push(part);
    offset += part.length;
  }
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

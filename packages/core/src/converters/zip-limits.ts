import JSZip from 'jszip';
import { RagError } from '../errors.ts';
import { reasonOf, unreadable } from './unreadable.ts';

/** How far an Office archive (DOCX, PPTX: a zip of XML parts and media) may expand before it is refused. */
export interface ZipLimits {
  /** Files in the archive; a 500-slide deck has about 3,000. */
  maxEntries: number;
  /** Bytes of all its files once inflated. mammoth needs about 60 bytes of memory per byte of document XML. */
  maxInflatedBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 10_000, maxInflatedBytes: 100_000_000 };

/** End of central directory record (APPNOTE.TXT 4.3.16): its fixed part, and the most a trailing comment adds. */
const EOCD_SIGNATURE = 0x06054b50;
const EOCD_SIZE = 22;
const MAX_COMMENT = 0xffff;

/**
 * Opens a DOCX or PPTX within `limits`, before anything is inflated for good: the entry count from the
 * end of central directory record, then the sizes the central directory declares, then, since those
 * can lie, one streaming pass that inflates every entry, keeps nothing and stops at the limit. A zip
 * bomb (a few kilobytes that inflate to gigabytes) fails with RAG_DOCUMENT_TOO_COMPLEX instead of
 * exhausting memory; an archive that cannot be read at all is RAG_DOCUMENT_UNREADABLE.
 * https://pkware.cachefly.net/webdocs/casestudies/APPNOTE.TXT
 */
export async function openZipWithinLimits(bytes: Buffer, format: string, limits: ZipLimits): Promise<JSZip> {
  const declaredEntries = entryCountOf(bytes);
  if (declaredEntries !== undefined && declaredEntries > limits.maxEntries) throw tooManyEntries(declaredEntries, limits);
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(bytes);
  } catch (error) {
    throw unreadable(`not a readable ${format}: ${reasonOf(error)}`, error);
  }
  const entries = Object.values(zip.files).filter((entry) => !entry.dir);
  if (entries.length > limits.maxEntries) throw tooManyEntries(entries.length, limits);
  const declaredBytes = entries.reduce((sum, entry) => sum + declaredSizeOf(entry), 0);
  if (declaredBytes > limits.maxInflatedBytes) {
    throw tooComplex(`it declares ${bytesOf(declaredBytes)} once inflated, the limit is ${bytesOf(limits.maxInflatedBytes)}`);
  }
  let inflated = 0;
  for (const entry of entries) {
    inflated += await inflatedSizeOf(entry, limits.maxInflatedBytes - inflated, format);
    if (inflated > limits.maxInflatedBytes) {
      throw tooComplex(`it inflates past ${bytesOf(limits.maxInflatedBytes)}, though it declares ${bytesOf(declaredBytes)}`);
    }
  }
  return zip;
}

/** Inflates an entry and counts its bytes, stopping as soon as it passes `budget`; nothing is kept. */
async function inflatedSizeOf(entry: JSZip.JSZipObject, budget: number, format: string): Promise<number> {
  try {
    return await new Promise<number>((resolve, reject) => {
      let size = 0;
      const stream = entry.nodeStream('nodebuffer');
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        // Paused, the stream stops pulling from the inflater, which then stops after its current block.
        if (size > budget) {
          stream.pause();
          resolve(size);
        }
      });
      stream.on('end', () => resolve(size));
      stream.on('error', reject);
    });
  } catch (error) {
    throw unreadable(`not a readable ${format}: ${reasonOf(error)}`, error);
  }
}

/** The entry count of the end of central directory record, read before any entry is parsed; undefined when absent or ZIP64. */
function entryCountOf(bytes: Buffer): number | undefined {
  const lowest = Math.max(0, bytes.length - EOCD_SIZE - MAX_COMMENT);
  for (let offset = bytes.length - EOCD_SIZE; offset >= lowest; offset -= 1) {
    if (bytes.readUInt32LE(offset) !== EOCD_SIGNATURE) continue;
    const entries = bytes.readUInt16LE(offset + 10);
    return entries === 0xffff ? undefined : entries;
  }
  return undefined;
}

/** The uncompressed size the central directory gives (jszip keeps it on the entry's compressed data). */
function declaredSizeOf(entry: JSZip.JSZipObject): number {
  const size = (entry as unknown as { _data?: { uncompressedSize?: unknown } })._data?.uncompressedSize;
  return typeof size === 'number' && size > 0 ? size : 0;
}

function tooManyEntries(entries: number, limits: ZipLimits): RagError {
  return tooComplex(`${entries.toLocaleString('en-US')} files in the archive, the limit is ${limits.maxEntries.toLocaleString('en-US')}`);
}

function tooComplex(reason: string): RagError {
  return new RagError('RAG_DOCUMENT_TOO_COMPLEX', `(${reason})`);
}

function bytesOf(count: number): string {
  return `${count.toLocaleString('en-US')} bytes`;
}

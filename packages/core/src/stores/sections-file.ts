import { open, readFile, rename, rm } from 'node:fs/promises';
import { removeAbandonedTemporaries, temporaryPathFor } from './temporary-files.ts';

/** The typed arrays a sections file holds, each stored as its raw bytes. */
export type Section = Uint8Array | Int32Array | Uint32Array | Float32Array;
export type Sections = Record<string, Section>;

const MAGIC = 'RAGSECT1';
const ALIGNMENT = 8;
const TYPES = { u8: Uint8Array, i32: Int32Array, u32: Uint32Array, f32: Float32Array } as const;
type TypeName = keyof typeof TYPES;

interface SectionEntry {
  name: string;
  type: TypeName;
  length: number;
}

interface Header<Meta> {
  meta: Meta;
  sections: SectionEntry[];
}

/**
 * A file of named typed arrays plus a JSON `meta`: the magic, the header's length (u32 LE), the header,
 * then each array's bytes at an 8-byte-aligned offset. Reading it is one read and a view per array, no
 * parsing, which is what makes a 100k-chunk search view load in a fraction of a second. Written to a
 * temporary file then renamed, so a reader sees the old file or the new one, never half of one; the
 * temporary files of earlier saves that were killed before their rename are removed first.
 */
export async function writeSectionsFile(path: string, meta: unknown, sections: Sections): Promise<void> {
  const entries = Object.entries(sections).map(([name, array]) => ({ name, type: typeNameOf(array), length: array.length }));
  const header = Buffer.from(JSON.stringify({ meta, sections: entries } satisfies Header<unknown>));
  const lead = Buffer.alloc(MAGIC.length + 4);
  lead.write(MAGIC, 0, 'latin1');
  lead.writeUInt32LE(header.length, MAGIC.length);
  await removeAbandonedTemporaries(path);
  const temporary = temporaryPathFor(path);
  try {
    await writeArrays(temporary, [lead, header], Object.values(sections));
    await rename(temporary, path);
  } catch (error) {
    // A full disk or a failed rename leaves no temporary file behind.
    await rm(temporary, { force: true });
    throw error;
  }
}

/** The lead bytes, then each array's bytes at an 8-byte-aligned offset, synced to disk. */
async function writeArrays(path: string, lead: Uint8Array[], arrays: Section[]): Promise<void> {
  const file = await open(path, 'w');
  try {
    let offset = 0;
    const write = async (bytes: Uint8Array) => {
      await file.write(bytes, 0, bytes.length, offset);
      offset += bytes.length;
    };
    for (const bytes of lead) await write(bytes);
    for (const array of arrays) {
      await write(new Uint8Array(padding(offset)));
      await write(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
    }
    await file.sync();
  } finally {
    await file.close();
  }
}

/** The file's meta and arrays (views into one buffer), or undefined when it is missing, cut short or not one. */
export async function readSectionsFile<Meta>(path: string): Promise<{ meta: Meta; sections: Sections } | undefined> {
  const bytes = await readFile(path).catch(() => undefined);
  if (!bytes || bytes.length < MAGIC.length + 4 || bytes.toString('latin1', 0, MAGIC.length) !== MAGIC) return undefined;
  // Views need their offsets aligned: a buffer that does not start on an 8-byte boundary is copied once.
  const buffer = bytes.byteOffset % ALIGNMENT === 0 ? bytes : Buffer.from(bytes);
  const headerLength = buffer.readUInt32LE(MAGIC.length);
  let offset = MAGIC.length + 4 + headerLength;
  if (offset > buffer.length) return undefined;
  const header = parseHeader<Meta>(buffer.toString('utf8', MAGIC.length + 4, offset));
  if (!header) return undefined;
  const sections: Sections = {};
  for (const { name, type, length } of header.sections) {
    offset += padding(offset);
    const Type = TYPES[type];
    const byteLength = length * Type.BYTES_PER_ELEMENT;
    if (offset + byteLength > buffer.length) return undefined;
    sections[name] = new Type(buffer.buffer, buffer.byteOffset + offset, length);
    offset += byteLength;
  }
  return { meta: header.meta, sections };
}

/** Only the file's meta (a small read at its start), or undefined when there is no such file. */
export async function readSectionsMeta<Meta>(path: string): Promise<Meta | undefined> {
  const file = await open(path, 'r').catch(() => undefined);
  if (!file) return undefined;
  try {
    const lead = Buffer.alloc(MAGIC.length + 4);
    const { bytesRead } = await file.read(lead, 0, lead.length, 0);
    if (bytesRead < lead.length || lead.toString('latin1', 0, MAGIC.length) !== MAGIC) return undefined;
    const header = Buffer.alloc(lead.readUInt32LE(MAGIC.length));
    await file.read(header, 0, header.length, lead.length);
    return parseHeader<Meta>(header.toString('utf8'))?.meta;
  } finally {
    await file.close();
  }
}

function parseHeader<Meta>(json: string): Header<Meta> | undefined {
  try {
    const header = JSON.parse(json) as Header<Meta>;
    return Array.isArray(header.sections) && header.sections.every((entry) => entry.type in TYPES) ? header : undefined;
  } catch {
    return undefined;
  }
}

function typeNameOf(array: Section): TypeName {
  if (array instanceof Int32Array) return 'i32';
  if (array instanceof Uint32Array) return 'u32';
  if (array instanceof Float32Array) return 'f32';
  return 'u8';
}

function padding(offset: number): number {
  return (ALIGNMENT - (offset % ALIGNMENT)) % ALIGNMENT;
}

import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSectionsFile, readSectionsMeta, writeSectionsFile } from '../../src/stores/sections-file.ts';

let folder: string;
let path: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-sections-'));
  path = join(folder, 'view');
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Lengths that leave each following array off an 8-byte boundary unless the writer pads. */
const sections = {
  bytes: new Uint8Array([1, 2, 3]),
  starts: Int32Array.from([0, -7, 2 ** 31 - 1]),
  terms: Uint32Array.from([4_294_967_295, 0, 12]),
  weights: Float32Array.from([0.1, -2.5, 3e38]),
  empty: new Uint8Array(0),
  last: Uint32Array.from([9]),
};

describe('sections file', () => {
  it('gives back every array, with its type and values, and the meta', async () => {
    await writeSectionsFile(path, { version: 3, names: ['a', 'ü'] }, sections);
    const read = await readSectionsFile<{ version: number; names: string[] }>(path);
    expect(read?.meta).toEqual({ version: 3, names: ['a', 'ü'] });
    for (const [name, array] of Object.entries(sections)) {
      expect(read?.sections[name]).toBeInstanceOf(array.constructor);
      expect(Array.from(read!.sections[name]!)).toEqual(Array.from(array));
    }
    expect(await readSectionsMeta(path)).toEqual({ version: 3, names: ['a', 'ü'] });
  });

  it('writes through a temporary file renamed into place, and replaces the previous file whole', async () => {
    await writeSectionsFile(path, { version: 1 }, sections);
    await writeSectionsFile(path, { version: 2 }, { only: Uint32Array.from([5]) });
    expect(await readdir(folder)).toEqual(['view']);
    const read = await readSectionsFile(path);
    expect(read?.meta).toEqual({ version: 2 });
    expect(Object.keys(read!.sections)).toEqual(['only']);
  });

  it('fails without leaving its temporary file when the file cannot be put in place', async () => {
    await mkdir(path);
    await expect(writeSectionsFile(path, { version: 1 }, sections)).rejects.toThrow();
    expect(await readdir(folder)).toEqual(['view']);
  });

  it('reads a missing, cut short or foreign file as nothing, never as wrong arrays', async () => {
    expect(await readSectionsFile(path)).toBeUndefined();
    expect(await readSectionsMeta(path)).toBeUndefined();
    await writeSectionsFile(path, { version: 1 }, sections);
    const whole = await readFile(path);
    await writeFile(path, whole.subarray(0, whole.length - 2));
    expect(await readSectionsFile(path)).toBeUndefined();
    await writeFile(path, Buffer.from('not a sections file at all'));
    expect(await readSectionsFile(path)).toBeUndefined();
    expect(await readSectionsMeta(path)).toBeUndefined();
    const brokenHeader = Buffer.from(whole);
    brokenHeader.write('}', 12, 'latin1');
    await writeFile(path, brokenHeader);
    expect(await readSectionsFile(path)).toBeUndefined();
  });
});

import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSectionsFile, readSectionsMeta, writeSectionsFile } from '../../src/stores/sections-file.ts';
import { ABANDONED_AFTER_MS } from '../../src/stores/temporary-files.ts';

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

  it('removes the temporary files that killed saves left, not the one a save in progress writes', async () => {
    const killed = ['view.2f1c.tmp', 'view.9a0e.tmp'];
    for (const name of killed) {
      await writeFile(join(folder, name), 'half a view');
      const beforeTheLimit = new Date(Date.now() - ABANDONED_AFTER_MS - 1000);
      await utimes(join(folder, name), beforeTheLimit, beforeTheLimit);
    }
    await writeFile(join(folder, 'view.5d7b.tmp'), 'a save in progress');
    await writeFile(join(folder, 'other.1234.tmp'), 'not a save of this file');
    await writeSectionsFile(path, { version: 1 }, sections);
    expect((await readdir(folder)).sort()).toEqual(['other.1234.tmp', 'view', 'view.5d7b.tmp']);
    expect((await readSectionsFile(path))?.meta).toEqual({ version: 1 });
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

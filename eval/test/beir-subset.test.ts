import { mkdtemp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeBeirSubset } from '../src/beir-subset.ts';

async function beirDir(documents: number, judged: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'beir-'));
  await mkdir(join(dir, 'qrels'));
  const corpus = Array.from({ length: documents }, (_, i) => JSON.stringify({ _id: `d${i}`, title: `T${i}`, text: `text ${i}` }));
  await writeFile(join(dir, 'corpus.jsonl'), `${corpus.join('\n')}\n`);
  await writeFile(join(dir, 'queries.jsonl'), `${JSON.stringify({ _id: 'q1', text: 'a question' })}\n`);
  await writeFile(join(dir, 'qrels', 'test.tsv'), `query-id\tcorpus-id\tscore\n${judged.map((id) => `q1\t${id}\t1`).join('\n')}\n`);
  return dir;
}

const ids = async (dir: string) => (await readFile(join(dir, 'corpus.jsonl'), 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as { _id: string })._id);

describe('writeBeirSubset', () => {
  it('keeps every judged document, fills with the same distractors every time, in corpus order', async () => {
    const source = await beirDir(50, ['d7', 'd42']);
    const first = join(source, 'out1');
    const second = join(source, 'out2');
    expect(await writeBeirSubset(source, 10, first)).toEqual({ judged: 2, distractors: 8 });
    await writeBeirSubset(source, 10, second);
    const kept = await ids(first);
    expect(kept).toHaveLength(10);
    expect(kept).toEqual(expect.arrayContaining(['d7', 'd42']));
    expect(await ids(second)).toEqual(kept);
    expect(kept).toEqual([...kept].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))));
    // Chosen by the hash of the id, not the first documents of the file.
    expect(kept.filter((id) => id !== 'd7' && id !== 'd42')).not.toEqual(['d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd8']);
    expect(await readFile(join(first, 'qrels', 'test.tsv'), 'utf8')).toContain('q1\td42\t1');
  });
});

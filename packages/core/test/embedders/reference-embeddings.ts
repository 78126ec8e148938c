import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What scripts/models/reference.py wrote into a fetched model folder: texts and the Python library's vectors. */
export interface ReferenceEmbeddings {
  producer: string;
  texts: string[];
  embeddings: number[][];
}

export function readReference(modelFolder: string): ReferenceEmbeddings {
  return JSON.parse(readFileSync(join(modelFolder, 'reference.json'), 'utf8')) as ReferenceEmbeddings;
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  a.forEach((value, i) => {
    const other = b[i] ?? Number.NaN;
    dot += value * other;
    normA += value * value;
    normB += other * other;
  });
  return dot / Math.sqrt(normA * normB);
}

/** A reference text short enough for an assertion message. */
export function label(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

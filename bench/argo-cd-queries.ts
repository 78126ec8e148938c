/**
 * Query sets made from the argo-cd docs corpus itself, not written by hand, shared by
 * bench/search-argo-cd.ts and bench/scale-argo-cd.ts so both load the query path with the same queries.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

export const QUERY_COUNT = 300;
export const PARAGRAPH_WORDS = 8;

export interface QuerySet {
  queries: string[];
  documentsWithHeading: number;
}

/**
 * One query per document that has a first-level heading, in path order: the heading's text and the
 * first words of the first prose paragraph after it, Markdown markup removed. When more documents
 * qualify than QUERY_COUNT, evenly spaced ones are kept, so the set spans the whole corpus.
 */
export async function buildQueries(root: string): Promise<QuerySet> {
  const paths = (await markdownFiles(root)).map((path) => relative(root, path)).sort();
  const candidates: string[] = [];
  for (const path of paths) {
    const query = queryOf(await readFile(join(root, path), 'utf8'));
    if (query && !candidates.includes(query)) candidates.push(query);
  }
  const step = Math.max(1, candidates.length / QUERY_COUNT);
  const queries: string[] = [];
  for (let position = 0; position < candidates.length && queries.length < QUERY_COUNT; position += step) {
    const query = candidates[Math.floor(position)];
    if (query) queries.push(query);
  }
  return { queries, documentsWithHeading: candidates.length };
}

/**
 * Natural-language questions, one per document with a first- or second-level heading, in path order:
 * `how do I use <the heading, lowercased>?` (as bench/runtime-memory.ts asks them). Words such as
 * "how", "do", "I" and "use" occur in many chunks, so these touch longer postings than the headings alone.
 */
export async function headingQuestions(root: string): Promise<string[]> {
  const paths = (await markdownFiles(root)).sort();
  const questions: string[] = [];
  for (const path of paths) {
    const heading = /^#{1,2} (.+)$/m.exec(await readFile(path, 'utf8'))?.[1];
    if (heading) questions.push(`how do I use ${heading.toLowerCase()}?`);
  }
  return questions;
}

export async function markdownFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) return markdownFiles(path);
      return Promise.resolve(entry.name.endsWith('.md') ? [path] : []);
    }),
  );
  return nested.flat();
}

export function queryOf(markdown: string): string | undefined {
  const lines = markdown.replace(/^---\n[\s\S]*?\n---\n/, '').split('\n');
  let inFence = false;
  let heading: string | undefined;
  for (const raw of lines) {
    const line = raw.trim();
    if (line.startsWith('```') || line.startsWith('~~~')) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    if (heading === undefined) {
      if (line.startsWith('# ')) heading = plainText(line.slice(2));
      continue;
    }
    if (line === '' || /^(#|[-*+] |\d+\. |\||>|!!!|\?\?\?|<|!\[|\[!|:::)/.test(line)) continue;
    const words = plainText(line).split(/\s+/).filter(Boolean).slice(0, PARAGRAPH_WORDS);
    if (words.length > 0) return `${heading} ${words.join(' ')}`.trim();
  }
  return heading || undefined;
}

/** Markdown inline markup removed: links keep their text, code spans their content. */
export function plainText(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

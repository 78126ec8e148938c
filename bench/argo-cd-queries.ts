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

/**
 * Natural-language questions about Argo CD, 10–25 words each, written as a user would type them:
 * many mid-frequency words ("application", "sync", "cluster", "when") rather than a heading's rare
 * ones, which is the load that makes pruned sparse search expensive at scale (issue 22).
 */
export const ARGO_CD_QUESTIONS: readonly string[] = [
  'How do I configure Argo CD to automatically sync an application when the Git repository changes?',
  'What is the difference between a manual sync and an automated sync policy with self heal enabled?',
  'How can I add a private Git repository with SSH credentials so that applications can pull from it?',
  'Why does my application stay OutOfSync even after a successful sync of all the resources?',
  'How do I register an external Kubernetes cluster with the argocd CLI and give it a name?',
  'What permissions does the Argo CD service account need on a managed cluster to deploy resources?',
  'How can I use an ApplicationSet with a Git generator to create one application per directory?',
  'How do I set up single sign on with Dex and an OIDC provider for the Argo CD web UI?',
  'Where do I define RBAC policies so that a team can only sync applications in its own project?',
  'How do I roll back an application to a previous revision from the user interface or the command line?',
  'What happens to resources that were deleted from Git when pruning is disabled for the application?',
  'How can I ignore differences in a field that a mutating webhook changes after every deployment?',
  'How do I install Argo CD in high availability mode and how many replicas of each component should run?',
  'Which metrics does the application controller expose and how do I scrape them with Prometheus?',
  'How do sync waves and hooks decide the order in which resources are applied during a sync?',
  'Can I use Helm value files from a different repository than the chart itself, and how is it configured?',
  'How do I configure notifications so that a Slack channel gets a message when a sync fails?',
  'What is the recommended way to manage secrets with Argo CD without committing them to Git in plain text?',
  'How do I upgrade Argo CD to a newer version without losing the applications and settings I already have?',
  'Why is the repo server running out of memory when it renders large Kustomize or Helm manifests?',
  'How can I limit which source repositories and destination namespaces an AppProject allows?',
  'How do I make the Argo CD API server reachable behind an ingress controller with TLS termination?',
  'What does the health status Degraded mean and how can I write a custom health check in Lua?',
  'How do I run a config management plugin as a sidecar of the repo server for my own templating tool?',
  'How can I tell Argo CD to wait for a custom resource to become healthy before moving to the next wave?',
  'How do I generate an API token for a local user account so that a CI pipeline can trigger syncs?',
  'What is the app of apps pattern and when should I use it instead of an ApplicationSet?',
  'How do I disable the admin user after configuring single sign on for everyone in the organization?',
  'How can I see why a sync operation failed and where are the logs of the application controller?',
  'How do I configure the reconciliation timeout so that Argo CD polls my Git repository less often?',
];

/** The `question:` lines of golden sets (eval/golden/*.yaml), in file order. */
export async function goldenQuestions(paths: readonly string[]): Promise<string[]> {
  const questions: string[] = [];
  for (const path of paths) {
    for (const match of (await readFile(path, 'utf8')).matchAll(/^\s*- question:\s*(.+)$/gm)) questions.push(match[1]!.replace(/^(['"])(.*)\1$/, '$2'));
  }
  return questions;
}

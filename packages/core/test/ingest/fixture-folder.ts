import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { docxDocument, pdfWithText, pptxDeck } from './fixture-documents.ts';

/** A Markdown guide of `sections` sections, long enough for several chunks of 300 characters. */
export function guide(sections: number, edition = 'alpha'): string {
  const parts = ['# Operator guide\n'];
  for (let index = 1; index <= sections; index += 1) {
    parts.push(`## Step ${index}\n\nIn the ${edition} edition, step ${index} explains how to rotate credential number ${index} safely. `.repeat(2));
  }
  return parts.join('\n');
}

export const HTML_PAGE = `<!doctype html><html><head><title>Status</title><script>track()</script></head><body>
<h1>Status page</h1><p>Every incident is posted here within ten minutes.</p>
<h2>Escalation</h2><ul><li>Page the on-call engineer</li><li>Open a bridgeline channel</li></ul>
<table><tr><th>severity</th><th>response</th></tr><tr><td>sev1</td><td>15 minutes</td></tr></table>
<pre><code class="language-bash">kubectl rollout undo deploy/web</code></pre></body></html>`;

/** One document of every supported format, plus a file of an unsupported one. */
export async function makeCorpus(): Promise<{ folder: string; remove(): Promise<void> }> {
  const folder = await mkdtemp(join(tmpdir(), 'rag-corpus-'));
  await writeFile(join(folder, 'guide.md'), guide(6));
  await writeFile(join(folder, 'status.html'), HTML_PAGE);
  await writeFile(join(folder, 'report.pdf'), await pdfWithText(['Quarterly report: uptime was 99.95 percent.', 'Second page: the incident budget is spent.']));
  await writeFile(join(folder, 'handbook.docx'), await docxDocument());
  await writeFile(join(folder, 'roadmap.pptx'), await pptxDeck());
  await writeFile(join(folder, 'notes.txt'), 'plain text is not a supported format');
  return { folder, remove: () => rm(folder, { recursive: true, force: true }) };
}

export const SUPPORTED_DOCUMENTS = ['guide.md', 'handbook.docx', 'report.pdf', 'roadmap.pptx', 'status.html'];

import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger, isRagError, loadConfig } from '@rag/core';
import { loadConversationSet } from './conversation-set.ts';
import { conversationMarkdown } from './conversation-report.ts';
import { runConversationSet } from './conversation-runner.ts';
import { EmbeddedIndex } from './embedded-index.ts';
import { GoldenSetError } from './golden-set.ts';
import { readNotes, writeReport } from './report.ts';

const USAGE = `Usage:
  pnpm eval:conversations --conversations eval/golden/<set>.yaml [--report-dir eval/reports]

Ingests the set's corpus into a temporary index (the adapters the environment configures) and searches each
follow-up three ways: on its own words, LLM-free with its history (the embedded default), and condensed by a
scripted gateway that answers each condense call with the set's \`standalone\` query. Exit 1 when the LLM-free
mode falls below the set's gate.`;

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { conversations: { type: 'string', multiple: true }, 'report-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help || !values.conversations) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const config = loadConfig(undefined, { LOG_LEVEL: 'warn' });
  const logger = createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT });
  let passed = true;
  for (const file of values.conversations) {
    const set = await loadConversationSet(resolve(file), repositoryRoot);
    set.file = file;
    const index = await EmbeddedIndex.open(config, logger);
    try {
      await index.ingestFolder(set.corpus);
      const result = await runConversationSet(set, index);
      const report = values['report-dir'] ? `${values['report-dir'].replace(/\/+$/, '')}/${set.name}.md` : undefined;
      const markdown = conversationMarkdown(result, report ? await readNotes(report) : undefined);
      process.stdout.write(`${markdown}\n`);
      if (report) await writeReport(report, markdown, result);
      if (!result.gate.passed) process.stderr.write(`Gate failed for ${file}: ${result.gate.failures.join('; ')}\n`);
      passed &&= result.gate.passed;
    } finally {
      await index.close();
    }
  }
  return passed ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof GoldenSetError) process.stderr.write(`${error.message}\n`);
    else if (isRagError(error)) process.stderr.write(`${error.code}: ${error.message}\n`);
    else process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
    process.exit(2);
  },
);

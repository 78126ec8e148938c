import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createChatModel, createLogger, isRagError, loadConfig } from '@rag/core';
import { startLlamaServer } from '../../scripts/llm/llama-server.ts';
import { CachedChatModel } from './cached-chat-model.ts';
import { loadConversationSet } from './conversation-set.ts';
import { conversationMarkdown } from './conversation-report.ts';
import { runConversationSet } from './conversation-runner.ts';
import { EmbeddedIndex } from './embedded-index.ts';
import { GoldenSetError } from './golden-set.ts';
import { readNotes, writeReport } from './report.ts';

const USAGE = `Usage:
  pnpm eval:conversations --conversations eval/golden/<set>.yaml [--report-dir eval/reports] [--serve <model> [--threads N]]

Ingests the set's corpus into a temporary index (the adapters the environment configures) and searches each
follow-up four ways: on its own words, LLM-free with its history (the embedded default), and condensed by a
scripted gateway that answers each condense call with the set's \`standalone\` query, searched alone
(FOLLOW_UP_SEARCH=condensed) and fused with the LLM-free search (fused, the default). Exit 1 when the LLM-free
mode falls below the set's gate. With GATEWAY_URL, or --serve a model of pnpm models:fetch (llama-server,
2 threads by default), two more modes condense each follow-up with that model, alone and fused (its replies cached
in .cache/answers).`;

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { conversations: { type: 'string', multiple: true }, 'report-dir': { type: 'string' }, serve: { type: 'string' }, threads: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help || !values.conversations) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const server = values.serve ? await startLlamaServer(values.serve, { threads: values.threads === undefined ? undefined : Number(values.threads) }) : undefined;
  try {
    return await run(values.conversations, values['report-dir'], server ? { GATEWAY_URL: server.url, GATEWAY_MODEL: server.name, GATEWAY_API_KEY: server.apiKey } : {});
  } finally {
    await server?.stop();
  }
}

async function run(files: string[], reportDir: string | undefined, gateway: Record<string, string>): Promise<number> {
  const config = loadConfig({ ...process.env, ...gateway }, { LOG_LEVEL: 'warn' });
  const gatewayModel = createChatModel(config);
  const condenser = gatewayModel && (await CachedChatModel.open(gatewayModel, resolve(repositoryRoot, '.cache', 'answers')));
  const logger = createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT });
  let passed = true;
  for (const file of files) {
    const set = await loadConversationSet(resolve(file), repositoryRoot);
    set.file = file;
    // Earlier answers the set leaves out are the extractive ones in every mode: only the condenser differs between runs.
    const index = await EmbeddedIndex.open({ ...config, GATEWAY_URL: undefined }, logger);
    try {
      await index.ingestFolder(set.corpus);
      const result = await runConversationSet(set, index, condenser);
      const report = reportDir ? `${reportDir.replace(/\/+$/, '')}/${set.name}${condenser ? `-${condenser.modelId}` : ''}.md` : undefined;
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

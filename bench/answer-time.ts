/**
 * How long a /chat answer takes on CPU: time to the first token and to the end of a streamed answer, with
 * the prompt's token count, for a real model behind the gateway adapter (llama-server, pnpm models:fetch).
 * The real app over the seed's corpus (../shared/corpora/vllm-gke, BM25), one question at a time, each
 * question asked once per k: the prompt's random fence value keeps llama-server from reusing a cached prompt.
 *
 *   pnpm exec tsx bench/answer-time.ts [--model qwen2.5-coder-1.5b-instruct] [--threads 2] [--k 3,5,8]
 *     [--structured off,json_schema] [--passage-chars 0,400] [--write]
 *
 * Each combination of GATEWAY_STRUCTURED, PROMPT_PASSAGE_CHARS and k is a row. The system rules are the same bytes
 * for every request, so llama-server reuses them from its prompt cache; the passages and question are read anew.
 *
 * `--write` replaces the "Answer time on CPU" section of bench/results.md.
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { OpenAiGatewayChatModel } from '../packages/core/src/chat/openai-gateway.ts';
import { StructuredOutput, type StructuredSetting } from '../packages/core/src/chat/structured-output.ts';
import { startLlamaServer } from '../scripts/llm/llama-server.ts';
import { startTestStack } from '../services/retrieval/test/test-stack.ts';
import { writeResultsSection } from './results-file.ts';

const SECTION = '## Answer time on CPU';
const QUESTIONS = [
  'Which address range do pods get inside the subnet?',
  'How long are the pieces documents are cut into, and how much do they overlap?',
  'Which weights file does the CPU tier fetch when its pod starts?',
];

interface Run {
  setting: string;
  k: number;
  question: string;
  firstTokenSeconds: number;
  totalSeconds: number;
  promptTokens: number;
  completionTokens: number;
}

async function timedAnswer(baseUrl: string, question: string, k: number, setting: string): Promise<Run> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: question, k, stream: true }) });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  let firstToken: number | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
    if (firstToken === undefined && text.includes('event: token')) firstToken = performance.now();
  }
  const end = performance.now();
  const done = JSON.parse(/event: done\ndata: (.+)\n/.exec(text)![1]!) as { usage: { prompt_tokens: number; completion_tokens: number } };
  return {
    setting,
    k,
    question,
    firstTokenSeconds: ((firstToken ?? end) - started) / 1000,
    totalSeconds: (end - started) / 1000,
    promptTokens: done.usage.prompt_tokens,
    completionTokens: done.usage.completion_tokens,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: 'string', default: 'qwen2.5-coder-1.5b-instruct' },
      threads: { type: 'string', default: '2' },
      k: { type: 'string', default: '3,5,8' },
      structured: { type: 'string', default: 'off' },
      'passage-chars': { type: 'string', default: '0' },
      write: { type: 'boolean', default: false },
    },
  });
  const ks = values.k.split(',').map(Number);
  const threads = Number(values.threads);
  const settings = values.structured.split(',').flatMap((structured) => values['passage-chars'].split(',').map((chars) => ({ structured: structured as StructuredSetting, chars: Number(chars) })));
  const server = await startLlamaServer(values.model, { threads });
  const runs: Run[] = [];
  try {
    for (const { structured, chars } of settings) {
      const setting = `${structured}, ${chars === 0 ? 'whole passages' : `${chars} characters`}`;
      const chatModel = new OpenAiGatewayChatModel({ url: server.url, model: server.name, apiKey: server.apiKey, timeoutMs: 900_000 });
      const structuredOutput = new StructuredOutput(structured, chatModel);
      const stack = await startTestStack({ chatModel, structuredOutput, promptPassageChars: chars, folder: join(import.meta.dirname, '..', '..', 'shared', 'corpora', 'vllm-gke') });
      try {
        for (const k of ks) {
          for (const question of QUESTIONS) {
            const run = await timedAnswer(stack.baseUrl, question, k, setting);
            process.stderr.write(`${setting} k=${k} ${run.firstTokenSeconds.toFixed(1)} s to first token, ${run.totalSeconds.toFixed(1)} s total, ${run.promptTokens} prompt + ${run.completionTokens} completion tokens\n`);
            runs.push(run);
          }
        }
      } finally {
        await stack.close();
      }
    }
  } finally {
    await server.stop();
  }
  const rows = [...new Set(runs.map((run) => `${run.setting}|${run.k}`))].map((key) => {
    const of = runs.filter((run) => `${run.setting}|${run.k}` === key);
    const pick = (field: (run: Run) => number) => median(of.map(field));
    return `| ${of[0]!.setting} | ${of[0]!.k} | ${of.length} | ${pick((run) => run.promptTokens).toFixed(0)} | ${pick((run) => run.completionTokens).toFixed(0)} | ${pick((run) => run.firstTokenSeconds).toFixed(1)} | ${pick((run) => run.totalSeconds).toFixed(1)} |`;
  });
  const section = [
    SECTION,
    '',
    `\`pnpm exec tsx bench/answer-time.ts --model ${values.model} --threads ${threads} --k ${values.k} --structured ${values.structured} --passage-chars ${values['passage-chars']} --write\`: the real app over the seed's corpus (vllm-gke, BM25, chunks of 1200 characters), \`/chat\` streamed (the first token is the first checked sentence), ${QUESTIONS.length} questions per row, medians; the system rules come from llama-server's prompt cache after the first request. ${values.model} on llama-server (build b1-7e4c0a9, CPU backend, ${threads} threads, greedy, at most 512 generated tokens). Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} CPU cores (${cpus()[0]?.model.trim()}), load average ${loadavg()[0]!.toFixed(1)} at the end: a machine shared with other work.`,
    '',
    '| GATEWAY_STRUCTURED, PROMPT_PASSAGE_CHARS | k (TOP_K) | answers | prompt tokens | completion tokens | first token (s) | total (s) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
  process.stdout.write(`${section}\n`);
  if (values.write) await writeResultsSection(SECTION, section);
}

await main();

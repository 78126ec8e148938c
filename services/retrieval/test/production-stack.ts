/**
 * The production path in process: the real app with TeiEmbedder, TeiReranker, QdrantStore and
 * OpenAiGatewayChatModel, each pointed at a local fake that answers as the real API documents, behind
 * a switch that can make it refuse, hang, fail or answer garbage. The handbook is ingested with the real
 * ingest() pipeline first.
 */
import {
  Answerer,
  createLogger,
  OpenAiGatewayChatModel,
  PassageReader,
  QdrantStore,
  Retriever,
  TeiEmbedder,
  TeiReranker,
  Telemetry,
  type IncomingTraceTrust,
  type IngestSummary,
  type Logger,
  type RerankFallback,
} from '@rag/core';
import type { FastifyInstance } from 'fastify';
import type { Converter } from '@rag/core/ingestion';
import { closeFakeServers } from '../../../packages/core/test/adapters/fake-server.ts';
import { buildApp } from '../src/app.ts';
import type { ApiKeys } from '../src/auth/api-keys.ts';
import { readinessChecks } from '../src/readiness-checks.ts';
import { StoreGate } from '../src/store-gate.ts';
import { FakeGateway, gatewayError } from './fakes/fake-gateway.ts';
import { FakeQdrant, qdrantError } from './fakes/fake-qdrant.ts';
import { teiEmbed, teiError, teiRerank } from './fakes/fake-tei.ts';
import { SwitchableServer } from './fakes/fault-switch.ts';
import { handbookFolder, ingestFolder } from './test-stack.ts';

export const EMBED_MODEL = 'fake/hashed-bag-of-words';
export const GATEWAY_MODEL = 'qwen3-4b-cpu';
export const KEYS = { embed: 'embed-key-abcdefgh', rerank: 'rerank-key-abcdefgh', gateway: 'gateway-key-abcdefgh' };

export type Dependency = 'store' | 'embed' | 'rerank' | 'gateway';

export interface ProductionStack {
  baseUrl: string;
  qdrant: FakeQdrant;
  gateway: FakeGateway;
  servers: Record<Dependency, SwitchableServer>;
  ingestSummary: IngestSummary;
  rerankCandidates: number;
  /** Another app on the same adapters with a fresh, unopened gate: a service that starts now. */
  startAnotherApp(): Promise<string>;
  /** Syncs the folder into Qdrant again, as the next ingest run would. */
  ingestAgain(): Promise<IngestSummary>;
  close(): Promise<void>;
}

export interface ProductionStackOptions {
  timeoutMs?: number;
  rerankCandidates?: number;
  rerankFallback?: RerankFallback;
  /** How often one request tries a reranker that is down; short in tests so that recovery shows at once. */
  rerankProbeIntervalMs?: number;
  /** Receives the retriever's reranker outage lines (warn when it starts, info when it ends). */
  retrieverLog?: Pick<Logger, 'warn' | 'info'>;
  isDraining?: () => boolean;
  /** The corpus ingested first (default: the handbook). */
  folder?: string;
  /** Converters besides Markdown's (e.g. HtmlConverter). */
  converters?: Converter[];
  /** Data routes then need a key (RAG_AUTH_FILE). */
  apiKeys?: ApiKeys;
  /** How long /readyz reuses one round of checks; default 0, so a switched dependency shows on the next call. */
  readinessCacheMs?: number;
  /** TRACE_TRUST_INCOMING, parsed; default: nobody's trace context is continued. */
  traceTrust?: IncomingTraceTrust;
}

export async function startProductionStack(options: ProductionStackOptions = {}): Promise<ProductionStack> {
  const qdrant = new FakeQdrant();
  const gateway = new FakeGateway();
  const servers: Record<Dependency, SwitchableServer> = {
    store: await SwitchableServer.start(qdrant.handle, (res) => qdrantError(res, 500, 'Service internal error: storage failure')),
    embed: await SwitchableServer.start(teiEmbed, (res) => teiError(res, 500, 'Backend error', 'backend')),
    rerank: await SwitchableServer.start(teiRerank, (res) => teiError(res, 500, 'Backend error', 'backend')),
    gateway: await SwitchableServer.start(gateway.handle, (res) => gatewayError(res, 500, 'upstream failure')),
  };
  // Small deadlines and one fast retry: a fault shows within a second, and a retry is still exercised.
  const call = { timeoutMs: options.timeoutMs ?? 5_000, retries: 1, minBackoffMs: 5 };
  const rerankCandidates = options.rerankCandidates ?? 4;
  const logger = createLogger('silent');
  const telemetry = new Telemetry();
  const store = new QdrantStore({ url: servers.store.url, collection: 'docs-v2', ...call });
  const embedder = new TeiEmbedder({ url: servers.embed.url, apiKey: KEYS.embed, model: EMBED_MODEL, batchSize: 8, ...call });
  const reranker = new TeiReranker({ url: servers.rerank.url, apiKey: KEYS.rerank, model: 'fake-reranker', ...call });
  const chatModel = new OpenAiGatewayChatModel({ url: servers.gateway.url, apiKey: KEYS.gateway, model: GATEWAY_MODEL, ...call });

  const serve = async (gate: StoreGate): Promise<{ app: FastifyInstance; url: string }> => {
    const { rerankFallback, rerankProbeIntervalMs, retrieverLog, isDraining } = options;
    const retriever = new Retriever({ store, embedder, reranker, rerankCandidates, telemetry, rerankFallback, rerankProbeIntervalMs, logger: retrieverLog });
    const answerer = new Answerer({ retriever, chatModel, telemetry });
    const checks = readinessChecks({ gate, store, embedder, reranker, chatModel });
    const app = buildApp({
      retriever,
      answerer,
      passages: new PassageReader(store),
      telemetry,
      readinessChecks: checks,
      storeGate: gate,
      defaultK: 5,
      logger,
      isDraining,
      apiKeys: options.apiKeys,
      readinessCacheMs: options.readinessCacheMs ?? 0,
      traceTrust: options.traceTrust,
    });
    return { app, url: await app.listen({ port: 0, host: '127.0.0.1' }) };
  };

  const gate = new StoreGate(store, embedder);
  await gate.ready();
  const folder = options.folder ?? handbookFolder;
  const ingestSummary = await ingestFolder(folder, store, embedder, logger, options.converters);
  const apps: FastifyInstance[] = [];
  const main = await serve(gate);
  apps.push(main.app);
  return {
    baseUrl: main.url,
    qdrant,
    gateway,
    servers,
    ingestSummary,
    rerankCandidates,
    async startAnotherApp() {
      const another = await serve(new StoreGate(store, embedder));
      apps.push(another.app);
      return another.url;
    },
    ingestAgain: () => ingestFolder(folder, store, embedder, logger),
    async close() {
      await Promise.all(apps.map((app) => app.close()));
      await telemetry.shutdown();
      await closeFakeServers();
    },
  };
}

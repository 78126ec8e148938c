import { toRagError } from '../errors.ts';
import type { Logger } from '../logger.ts';

/** What one request does with the reranker: call it, be the one probe of an outage, or skip it. */
export type RerankAdmission = 'call' | 'probe' | 'skip';

/** The two levels an outage is reported at; any pino logger fits. */
export type OutageLog = Pick<Logger, 'warn' | 'info'>;

export interface RerankCircuitOptions {
  /** While the reranker is down, at most one request per interval tries it (the probe); the others skip it. */
  probeIntervalMs: number;
  logger?: OutageLog | undefined;
  now?: () => number;
}

interface Outage {
  since: number;
  /** The code of the latest failure, which the fallbacks are counted under. */
  code: string;
  nextProbeAt: number;
  fallbacks: number;
}

/**
 * A half-open circuit around the reranker (https://martinfowler.com/bliki/CircuitBreaker.html): the first
 * failure opens it, and from then on requests skip the reranker at once instead of each waiting for it
 * (RERANK_TIMEOUT_MS is 120 s on Kubernetes). Every `probeIntervalMs` one request tries it again; the
 * first probe that succeeds closes the circuit. One warning when an outage starts, one info line when it ends.
 */
export class RerankCircuit {
  private outage: Outage | undefined;
  private probing = false;
  private readonly now: () => number;

  constructor(private readonly options: RerankCircuitOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  get isOpen(): boolean {
    return this.outage !== undefined;
  }

  /** The code the current outage is counted under; undefined while the reranker is up. */
  get outageCode(): string | undefined {
    return this.outage?.code;
  }

  admit(): RerankAdmission {
    const outage = this.outage;
    if (!outage) return 'call';
    if (this.probing || this.now() < outage.nextProbeAt) return 'skip';
    this.probing = true;
    return 'probe';
  }

  /** A rerank call admitted as `admission` answered. Only a probe ends an outage: a call that started before it began proves nothing. */
  succeeded(admission: RerankAdmission): void {
    if (admission !== 'probe') return;
    this.probing = false;
    const outage = this.outage;
    if (!outage) return;
    this.outage = undefined;
    const downSeconds = Math.round((this.now() - outage.since) / 100) / 10;
    this.options.logger?.info(
      { dependency: 'rerank', downSeconds, fallbacks: outage.fallbacks },
      `The reranker is back after ${downSeconds} s (${outage.fallbacks} requests were answered from the fused ranking); reranking again.`,
    );
  }

  /** A rerank call failed for a reason of the reranker's own (not the request's abort). */
  failed(admission: RerankAdmission, error: unknown): void {
    if (admission === 'probe') this.probing = false;
    const code = toRagError(error).code;
    const now = this.now();
    if (this.outage) {
      this.outage.code = code;
      if (admission === 'probe') this.outage.nextProbeAt = now + this.options.probeIntervalMs;
      return;
    }
    this.outage = { since: now, code, nextProbeAt: now + this.options.probeIntervalMs, fallbacks: 0 };
    this.options.logger?.warn(
      { dependency: 'rerank', code, reason: (error as Error)?.message },
      `The reranker is failing (${code}): /search and /chat answer from the fused ranking ("reranked": false) until it is back; ` +
        `one request tries it every ${this.options.probeIntervalMs / 1000} s.`,
    );
  }

  /** A probe ended by the request's own abort says nothing about the reranker: the next request may probe. */
  abandoned(admission: RerankAdmission): void {
    if (admission === 'probe') this.probing = false;
  }

  /** A request answered without the reranker, for the info line that ends the outage. */
  countFallback(): void {
    if (this.outage) this.outage.fallbacks += 1;
  }
}

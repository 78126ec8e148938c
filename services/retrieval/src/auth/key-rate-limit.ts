import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { ApiKeys } from './api-keys.ts';

/** What one charge to a key's budget leaves: the numbers of the X-RateLimit-* and Retry-After headers. */
export interface BudgetState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends and the budget is whole again. */
  resetSeconds: number;
}

/**
 * The per-key budget of RAG_AUTH_FILE (rate_limit_per_minute), in memory, per replica: N replicas admit up
 * to N times it behind a Service. A charge may cost several units: one MCP POST carrying a JSON-RPC batch
 * costs one per message, so a batch cannot buy 100 tool calls for the price of one request.
 */
export class KeyRateLimits {
  private readonly limiters = new Map<string, RateLimiterMemory>();

  constructor(private readonly apiKeys: ApiKeys) {}

  /** Takes `cost` units from the key's budget; refused (and still counted) when the window holds fewer. */
  async charge(keyName: string, cost: number): Promise<BudgetState> {
    const limiter = this.limiterOf(keyName);
    try {
      return stateOf(limiter, await limiter.consume(keyName, cost), true);
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      return stateOf(limiter, refusal, false);
    }
  }

  private limiterOf(keyName: string): RateLimiterMemory {
    let limiter = this.limiters.get(keyName);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points: this.apiKeys.limitOf(keyName), duration: this.apiKeys.windowMs / 1000 });
      this.limiters.set(keyName, limiter);
    }
    return limiter;
  }
}

function stateOf(limiter: RateLimiterMemory, result: RateLimiterRes, allowed: boolean): BudgetState {
  return { allowed, limit: limiter.points, remaining: result.remainingPoints, resetSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)) };
}

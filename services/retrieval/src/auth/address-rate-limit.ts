import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { BudgetState } from './key-rate-limit.ts';

/**
 * The brake of an API without keys (no RAG_AUTH_FILE): each client address may send `perMinute` requests
 * (MCP messages) a minute to the data routes, in memory, per replica. The address is the socket's peer
 * (Fastify's request.ip without trustProxy): behind a proxy that is the proxy's, which is why a deployment
 * behind one sets RAG_AUTH_FILE, whose per-key limits replace this one.
 */
export class AddressRateLimits {
  private readonly limiter: RateLimiterMemory;

  constructor(perMinute: number, windowMs = 60_000) {
    this.limiter = new RateLimiterMemory({ points: perMinute, duration: windowMs / 1000 });
  }

  /** Takes `cost` units from the address's budget; refused (and still counted) when the window holds fewer. */
  async charge(address: string, cost: number): Promise<BudgetState> {
    try {
      return this.stateOf(await this.limiter.consume(address, cost), true);
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      return this.stateOf(refusal, false);
    }
  }

  private stateOf(result: RateLimiterRes, allowed: boolean): BudgetState {
    return { allowed, limit: this.limiter.points, remaining: result.remainingPoints, resetSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)) };
  }
}

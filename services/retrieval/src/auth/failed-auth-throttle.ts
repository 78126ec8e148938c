import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** Wrong keys one address may present per window before it is told to wait: a client that mistyped its key retries well within it. */
export const FAILED_AUTH_PER_MINUTE = 20;

/**
 * Counts the wrong keys presented from each address (request.ip) and says when one is over its budget.
 * Only failures count, and a valid key is never held back: behind a proxy or a NAT many clients share an
 * address, and one of them guessing must not lock the others out.
 */
export class FailedAuthThrottle {
  private readonly failures: RateLimiterMemory;

  constructor(windowMs: number, limit = FAILED_AUTH_PER_MINUTE) {
    this.failures = new RateLimiterMemory({ points: limit, duration: windowMs / 1000 });
  }

  /** Records one failure; the seconds the address must wait when it is past its budget, else undefined. */
  async recordFailure(address: string): Promise<number | undefined> {
    try {
      await this.failures.consume(address, 1);
      return undefined;
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
    }
  }
}

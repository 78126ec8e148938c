/**
 * The part of autocannon's programmatic API that bench/search-load.ts uses (the package ships
 * no types; https://github.com/mcollina/autocannon#api).
 */
declare module 'autocannon' {
  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Called before each request is sent: returns the request to send. */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
    }

    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      pipelining?: number;
      requests?: Request[];
    }

    /** Latencies in milliseconds; request figures per one-second sample. */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
      total: number;
    }

    interface Result {
      /** Seconds. */
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      latency: Histogram & { totalCount: number };
      requests: Histogram & { sent: number };
      throughput: Histogram;
    }
  }

  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export = autocannon;
}

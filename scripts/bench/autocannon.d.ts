// The few parts of autocannon's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      /** Seconds before a request counts as a timeout. */
      timeout?: number;
      pipelining?: number;
    }

    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
    }

    interface Result {
      url: string;
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      mismatches: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Histogram;
      requests: Histogram & { sent: number };
      throughput: Histogram;
    }

    interface Instance extends PromiseLike<Result> {
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}

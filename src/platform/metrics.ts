import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per service instance; modules register their metrics on it. */
export function createMetrics() {
  const registry = new Registry();
  // The event-loop delay histogram samples with a timer; prom-client's default (10 ms) wakes an idle
  // service 100 times a second (about a third of its idle CPU). At 100 ms a stall longer than that is
  // always recorded and shorter ones in proportion to their length, enough for the lag percentiles.
  collectDefaultMetrics({ register: registry, prefix: 'iam_', eventLoopMonitoringPrecision: 100 });
  return {
    registry,
    httpRequests: new Counter({
      name: 'iam_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'iam_http_request_duration_seconds',
      help: 'HTTP request duration by route',
      labelNames: ['method', 'route'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    gauge(name: string, help: string, labelNames: string[], collect: (gauge: Gauge) => Promise<void>): Gauge {
      return new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        async collect() {
          await collect(this);
        },
      });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

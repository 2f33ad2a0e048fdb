import { Counter } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { Metrics } from '../metrics.ts';
import type { OutboundQueue } from './queue.ts';

export type AttemptOutcomeLabel = 'delivered' | 'retrying' | 'failed' | 'cancelled';

const OUTCOMES: AttemptOutcomeLabel[] = ['delivered', 'retrying', 'failed', 'cancelled'];

export interface OutboundMetrics {
  /** Reports the queue's backlog and exports its outcome series from now on. */
  track(queue: OutboundQueue): void;
  /** `count` deliveries (1 unless a statement settled several) ended an attempt with `outcome`. */
  outcome(feature: string, outcome: AttemptOutcomeLabel, count?: number): void;
}

/** Attempts by outcome, each queue's depth and the age of its oldest due delivery, labelled by feature. */
export function registerOutboundMetrics(metrics: Metrics, clock: Clock): OutboundMetrics {
  const queues: OutboundQueue[] = [];
  const attempts = new Counter({
    name: 'iam_outbound_deliveries_total',
    help: 'Delivery attempts by outcome (retrying: failed with another attempt scheduled; failed: none left; cancelled: dropped, the target stopped)',
    labelNames: ['feature', 'outcome'],
    registers: [metrics.registry],
  });
  const backlogs = async () => Promise.all(queues.map(async (queue) => ({ feature: queue.feature, ...(await queue.backlog(clock.now())) })));
  metrics.gauge('iam_outbound_queue_depth', 'Deliveries waiting for an attempt, due or scheduled', ['feature'], async (gauge) => {
    for (const { feature, depth } of await backlogs()) gauge.set({ feature }, depth);
  });
  metrics.gauge('iam_outbound_oldest_due_seconds', 'How long the oldest due delivery has waited for an attempt', ['feature'], async (gauge) => {
    for (const { feature, oldestDueSeconds } of await backlogs()) gauge.set({ feature }, oldestDueSeconds);
  });
  return {
    track(queue) {
      queues.push(queue);
      for (const outcome of OUTCOMES) attempts.inc({ feature: queue.feature, outcome }, 0);
    },
    outcome: (feature, outcome, count = 1) => attempts.inc({ feature, outcome }, count),
  };
}

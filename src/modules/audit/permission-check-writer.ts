import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import type { Queryable } from '../../platform/db/pool.ts';
import type { Metrics } from '../../platform/metrics.ts';
import { newId } from '../../platform/ids.ts';
import type { AuditEntry } from './entry.ts';
import { chunksOf, insertPermissionCheckChunks, type PermissionCheckChunk } from './permission-check-chunks.ts';

export interface PermissionCheckWriterOptions {
  db: Queryable;
  logger: Logger;
  metrics: Metrics;
  /** Entries waiting beyond this are dropped (and counted): a request never waits for the audit. */
  maxQueue: number;
  /** Entries per INSERT; a full batch is written at once, a partial one after flushIntervalMs. */
  batchSize: number;
  flushIntervalMs: number;
  /** The first wait before a failed batch is written again (doubling up to 5 s); default 100 ms. */
  retryDelayMs?: number;
}

const MAX_RETRY_DELAY_MS = 5_000;
/** Attempts of a batch while draining at shutdown: the process is leaving, it cannot wait for ever. */
const DRAIN_ATTEMPTS = 5;

/**
 * The PERMISSION_CHECK write path: `record` only queues (no await, no I/O on the request), and a
 * single writer flushes the queue with one INSERT per batch, a row per chunk of entries (tenant,
 * user, client IP and user agent in common: permission-check-chunks.ts). Entries are observations,
 * not state changes, so they are stored directly rather than through the event store
 * (docs/decisions.md). A batch stays at the head of the queue until its INSERT succeeded: a failed
 * write is retried with backoff (the same chunks and ids, and the INSERT skips chunk ids already
 * there, so a retry never duplicates), and meanwhile the bounded queue refuses new entries rather
 * than grow.
 */
export class PermissionCheckWriter {
  private queue: AuditEntry[] = [];
  /** The head batch's chunks, made once so that every attempt writes the same chunk ids. */
  private headChunks: PermissionCheckChunk[] | null = null;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  /** Set by drain: a failing batch is then given up after DRAIN_ATTEMPTS instead of retried for ever. */
  private draining = false;
  private readonly written: Counter;
  private readonly dropped: Counter<'reason'>;
  private readonly failedWrites: Counter;

  constructor(private readonly options: PermissionCheckWriterOptions) {
    const registers = [options.metrics.registry];
    this.written = new Counter({ name: 'iam_audit_permission_checks_written_total', help: 'PERMISSION_CHECK audit entries written', registers });
    this.dropped = new Counter({
      name: 'iam_audit_permission_checks_dropped_total',
      help: 'PERMISSION_CHECK audit entries dropped (queue full; write_failed: still failing when the service stopped)',
      labelNames: ['reason'],
      registers,
    });
    this.failedWrites = new Counter({
      name: 'iam_audit_permission_check_write_failures_total',
      help: 'Failed INSERTs of PERMISSION_CHECK batches (each is retried; its entries stay queued)',
      registers,
    });
  }

  record(entry: AuditEntry): void {
    if (this.queue.length >= this.options.maxQueue) {
      this.dropped.inc({ reason: 'queue_full' });
      return;
    }
    this.queue.push(entry);
    if (this.queue.length >= this.options.batchSize) this.flushSoon(0);
    else this.flushSoon(this.options.flushIntervalMs);
  }

  get pending(): number {
    return this.queue.length;
  }

  private flushSoon(delayMs: number): void {
    if (this.flushing) return; // the running flush looks at the queue again when it ends
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flushing = this.flushAll().finally(() => {
        this.flushing = null;
        if (this.queue.length > 0) this.flushSoon(this.queue.length >= this.options.batchSize ? 0 : this.options.flushIntervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  /**
   * Writes the queue batch by batch; a batch leaves the queue only once written. After the first
   * batch only full ones follow at once (`everything`: all, at shutdown): what arrived meanwhile
   * waits for the next interval, so a flush is a full batch or an interval's worth, not what
   * arrived during one INSERT (each statement and commit costs PostgreSQL what a few hundred
   * entries do: docs/performance.md).
   */
  private async flushAll(everything = false): Promise<void> {
    let failures = 0;
    let written = false;
    while (this.queue.length > 0 && (everything || !written || this.headChunks !== null || this.queue.length >= this.options.batchSize)) {
      this.headChunks ??= chunksOf(this.queue.slice(0, this.options.batchSize), newId);
      const batchSize = this.headChunks.reduce((n, chunk) => n + chunk.entries.length, 0);
      try {
        await insertPermissionCheckChunks(this.options.db, this.headChunks);
        this.queue.splice(0, batchSize);
        this.headChunks = null;
        this.written.inc(batchSize);
        written = true;
        failures = 0;
      } catch (error) {
        failures += 1;
        this.failedWrites.inc();
        if (this.draining && failures >= DRAIN_ATTEMPTS) {
          this.queue.splice(0, batchSize);
          this.headChunks = null;
          this.dropped.inc({ reason: 'write_failed' }, batchSize);
          this.options.logger.error({ err: error, entries: batchSize }, 'permission-check audit entries lost: still failing at shutdown');
          continue;
        }
        this.options.logger.warn({ err: error, entries: batchSize, attempt: failures }, 'writing permission-check audit entries failed; retrying');
        const delay = Math.min(MAX_RETRY_DELAY_MS, (this.options.retryDelayMs ?? 100) * 2 ** (failures - 1));
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  }

  /**
   * Writes everything queued (shutdown), retrying a failing batch a few times before giving it up;
   * later records are still accepted and need another drain.
   */
  async drain(): Promise<void> {
    this.draining = true;
    try {
      await this.flushing;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      await this.flushAll(true);
    } finally {
      this.draining = false;
    }
  }
}

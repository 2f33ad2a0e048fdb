import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import type { Queryable } from '../../platform/db/pool.ts';
import type { Metrics } from '../../platform/metrics.ts';
import { insertAuditEntries } from './entries-table.ts';
import type { AuditEntry } from './entry.ts';

export interface PermissionCheckWriterOptions {
  db: Queryable;
  logger: Logger;
  metrics: Metrics;
  /** Entries waiting beyond this are dropped (and counted): a request never waits for the audit. */
  maxQueue: number;
  /** Rows per INSERT; a full batch is written at once, a partial one after flushIntervalMs. */
  batchSize: number;
  flushIntervalMs: number;
}

/**
 * The PERMISSION_CHECK write path: `record` only queues (no await, no I/O on the request), and a
 * single writer flushes the queue with multi-row INSERTs. Entries are observations, not state
 * changes, so they go straight to audit_log rather than through the event store (docs/decisions.md).
 */
export class PermissionCheckWriter {
  private queue: AuditEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private readonly written: Counter;
  private readonly dropped: Counter<'reason'>;

  constructor(private readonly options: PermissionCheckWriterOptions) {
    const registers = [options.metrics.registry];
    this.written = new Counter({ name: 'iam_audit_permission_checks_written_total', help: 'PERMISSION_CHECK audit entries written', registers });
    this.dropped = new Counter({
      name: 'iam_audit_permission_checks_dropped_total',
      help: 'PERMISSION_CHECK audit entries dropped (queue full, or the write failed)',
      labelNames: ['reason'],
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

  private async flushAll(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.batchSize);
      try {
        await insertAuditEntries(this.options.db, batch);
        this.written.inc(batch.length);
      } catch (error) {
        this.dropped.inc({ reason: 'write_failed' }, batch.length);
        this.options.logger.error({ err: error, entries: batch.length }, 'permission-check audit entries lost');
      }
    }
  }

  /** Writes everything queued (shutdown); later records are still accepted and need another drain. */
  async drain(): Promise<void> {
    await this.flushing;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushAll();
  }
}

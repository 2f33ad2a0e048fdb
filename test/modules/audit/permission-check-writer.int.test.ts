import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../src/modules/audit/entry.ts';
import { PermissionCheckWriter } from '../../../src/modules/audit/permission-check-writer.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createMetrics } from '../../../src/platform/metrics.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

const entry = (tenantId: string): AuditEntry => ({
  id: newId(),
  tenantId,
  action: 'PERMISSION_CHECK',
  userId: 'u1',
  resource: null,
  resourceId: null,
  status: 'success',
  errorCode: null,
  errorMessage: null,
  clientIp: null,
  userAgent: null,
  metadata: { allowed: true },
  createdAt: new Date().toISOString(),
});

describe('PermissionCheckWriter', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  /** A real refusal from PostgreSQL: a trigger rejects the tenant's inserts until the answered function drops it. */
  const refuseInsertsOf = async (tenant: string) => {
    const name = `refuse_${tenant}`;
    await db.pool.query(`create function ${name}() returns trigger language plpgsql as $$
      begin if new.tenant_id = '${tenant}' then raise exception 'refused for the test'; end if; return new; end $$`);
    await db.pool.query(`create trigger ${name} before insert on audit_permission_checks for each row execute function ${name}()`);
    return async () => {
      await db.pool.query(`drop trigger ${name} on audit_permission_checks`);
    };
  };
  /** Entries stored for the tenant, over all its chunks. */
  const rows = async (tenant: string) =>
    Number((await db.pool.query('select coalesce(sum(entry_count), 0) as count from audit_permission_checks where tenant_id = $1', [tenant])).rows[0].count);
  const storedIds = async (tenant: string) =>
    (await db.pool.query<{ entries: string }>('select entries from audit_permission_checks where tenant_id = $1', [tenant])).rows
      .flatMap((row) => (JSON.parse(row.entries) as [string][]).map(([id]) => id))
      .sort();
  const setup = (options: { maxQueue: number; batchSize: number; flushIntervalMs: number; retryDelayMs?: number }) => {
    const metrics = createMetrics();
    const statements: unknown[][] = [];
    // Records the INSERT statements' parameters on their way to the database (a real pool underneath).
    const counting = { query: ((text: string, values: unknown[]) => (statements.push(values), db.pool.query(text, values))) as never };
    const writer = new PermissionCheckWriter({ db: counting, logger: pino({ level: 'silent' }), metrics, ...options });
    const metric = async (name: string) => (await metrics.registry.getSingleMetricAsString(name)).split('\n').filter((line) => !line.startsWith('#'));
    return { writer, statements, metric };
  };

  it('writes a full batch at once in one INSERT, a chunk row per user, and the rest after the interval', async () => {
    const { writer, statements } = setup({ maxQueue: 1000, batchSize: 50, flushIntervalMs: 100 });
    const recorded = Array.from({ length: 120 }, (_, i) => ({ ...entry('batched'), userId: `u${i % 2}` }));
    for (const e of recorded) writer.record(e);
    await expect.poll(() => rows('batched'), { timeout: 5000 }).toBe(120);
    expect(statements.length).toBeLessThanOrEqual(4);
    expect(statements.every((values) => values.length === 9)).toBe(true);
    // A full batch of 50 from two users: two chunks of 25 entries.
    expect(statements[0]![7]).toEqual([25, 25]);
    expect(await storedIds('batched')).toEqual(recorded.map((e) => e.id).sort());
    await writer.drain();
  });

  it('keeps a batch whose INSERT fails and writes it once the database accepts it again, every entry once', async () => {
    const accept = await refuseInsertsOf('retried');
    const { writer, metric } = setup({ maxQueue: 1000, batchSize: 20, flushIntervalMs: 10, retryDelayMs: 20 });
    const recorded = Array.from({ length: 50 }, () => entry('retried'));
    for (const e of recorded) writer.record(e);
    await expect.poll(async () => (await metric('iam_audit_permission_check_write_failures_total')).join(), { timeout: 5000 }).toMatch(/total [2-9]/);
    expect(await rows('retried')).toBe(0);
    expect(writer.pending).toBe(50);
    await accept();
    await expect.poll(() => writer.pending, { timeout: 10_000 }).toBe(0);
    expect(await storedIds('retried')).toEqual(recorded.map((e) => e.id).sort());
    expect(await metric('iam_audit_permission_checks_dropped_total')).not.toContain('write_failed');
    await writer.drain();
  });

  it('gives a batch that still fails at shutdown up after a few attempts, counted as write_failed', async () => {
    const accept = await refuseInsertsOf('leaving');
    const { writer, metric } = setup({ maxQueue: 1000, batchSize: 1000, flushIntervalMs: 60_000, retryDelayMs: 1 });
    for (let i = 0; i < 7; i++) writer.record(entry('leaving'));
    await writer.drain();
    expect(writer.pending).toBe(0);
    expect(await metric('iam_audit_permission_checks_dropped_total')).toContain('iam_audit_permission_checks_dropped_total{reason="write_failed"} 7');
    await accept();
  });

  it('drops and counts what does not fit in the queue instead of waiting, and drains the rest on shutdown', async () => {
    const { writer, metric } = setup({ maxQueue: 10, batchSize: 1000, flushIntervalMs: 60_000 });
    for (let i = 0; i < 25; i++) writer.record(entry('bounded'));
    expect(writer.pending).toBe(10);
    expect(await rows('bounded')).toBe(0);
    await writer.drain();
    expect(await rows('bounded')).toBe(10);
    expect(await metric('iam_audit_permission_checks_dropped_total')).toContain('iam_audit_permission_checks_dropped_total{reason="queue_full"} 15');
    expect(await metric('iam_audit_permission_checks_written_total')).toContain('iam_audit_permission_checks_written_total 10');
  });
});

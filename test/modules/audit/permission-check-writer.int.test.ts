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

  const rows = async (tenant: string) => Number((await db.pool.query('select count(*) from audit_log where tenant_id = $1', [tenant])).rows[0].count);
  const setup = (options: { maxQueue: number; batchSize: number; flushIntervalMs: number }) => {
    const metrics = createMetrics();
    const statements: number[] = [];
    // Counts the INSERT statements that reach the database (a real pool underneath).
    const counting = { query: ((text: string, values: unknown[]) => (statements.push(values.length), db.pool.query(text, values))) as never };
    const writer = new PermissionCheckWriter({ db: counting, logger: pino({ level: 'silent' }), metrics, ...options });
    const metric = async (name: string) => (await metrics.registry.getSingleMetricAsString(name)).split('\n').filter((line) => !line.startsWith('#'));
    return { writer, statements, metric };
  };

  it('writes a full batch at once in one multi-row INSERT and the rest after the interval', async () => {
    const { writer, statements } = setup({ maxQueue: 1000, batchSize: 50, flushIntervalMs: 100 });
    for (let i = 0; i < 120; i++) writer.record(entry('batched'));
    await expect.poll(() => rows('batched'), { timeout: 5000 }).toBe(120);
    expect(statements.length).toBeLessThanOrEqual(4);
    expect(Math.max(...statements)).toBe(50 * 13);
    await writer.drain();
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

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundQueue } from '../../../src/platform/outbound/queue.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

const failed = { ok: false, status: 500, body: 'no', durationMs: 3, error: 'receiver answered 500' };

describe('outbound delivery queue', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  const deliveries = (count: number, targetId = 'target-1') =>
    Array.from({ length: count }, () => ({ tenantId: 'acme', targetId, eventId: newId(), eventType: 'thing.happened', payload: '{}' }));

  it('enqueues an event once per target, however often the consumer sees it', async () => {
    const queue = new OutboundQueue(db.pool, 'once');
    const batch = deliveries(3);
    const now = new Date();
    expect(await queue.enqueue(db.pool, batch, now)).toHaveLength(3);
    expect(await queue.enqueue(db.pool, [...batch, ...deliveries(1)], now)).toHaveLength(1);
    expect((await queue.listForTarget('acme', 'target-1', 1, 10)).total).toBe(4);
    expect((await queue.listForTarget('other-tenant', 'target-1', 1, 10)).total).toBe(0);
  });

  it('lets concurrent workers (several instances) claim disjoint deliveries, each held for its lease', async () => {
    const queue = new OutboundQueue(db.pool, 'shared');
    const now = new Date();
    await queue.enqueue(db.pool, deliveries(200), now);
    const workers = Array.from({ length: 8 }, () => new OutboundQueue(db.pool, 'shared'));
    const claims = await Promise.all(workers.map((worker) => worker.claimDue(now, 40, 60_000)));
    const ids = claims.flat().map((delivery) => delivery.id);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
    expect(await queue.claimDue(now, 40, 60_000)).toEqual([]);
    // When the lease ends (a worker died mid-request), the delivery is due again.
    const afterLease = new Date(now.getTime() + 60_001);
    expect(await queue.claimDue(afterLease, 500, 60_000)).toHaveLength(200);
  });

  it('records each attempt, schedules the retry, counts consecutive failures per target and resets them on success', async () => {
    const queue = new OutboundQueue(db.pool, 'attempts');
    const now = new Date();
    await queue.enqueue(db.pool, deliveries(2, 'flaky'), now);
    const [first, second] = await queue.claimDue(now, 2, 60_000);
    const retryAt = new Date(now.getTime() + 60_000);
    expect(await queue.recordAttempt(first!, failed, { delivered: false, retryAt }, now)).toBe(1);
    expect(await queue.recordAttempt(second!, failed, { delivered: false, retryAt: null }, now)).toBe(2);
    const log = await queue.listForTarget('acme', 'flaky', 1, 10);
    expect(log.items.map((entry) => [entry.status, entry.attempt, entry.responseStatus])).toEqual(
      expect.arrayContaining([
        ['retrying', 1, 500],
        ['failed', 1, 500],
      ]),
    );
    expect(await queue.claimDue(now, 10, 60_000)).toEqual([]);
    const [retry] = await queue.claimDue(retryAt, 10, 60_000);
    expect(retry).toMatchObject({ id: first!.id, attempt: 2 });
    expect(await queue.recordAttempt(retry!, { ...failed, ok: true, status: 200, error: null }, { delivered: true }, retryAt)).toBe(0);
    const { rows } = await db.pool.query('select attempt, response_status from outbound_attempts where delivery_id = $1 order by attempt', [first!.id]);
    expect(rows).toEqual([
      { attempt: 1, response_status: 500 },
      { attempt: 2, response_status: 200 },
    ]);
  });

  it('retries on demand only deliveries that are failed or were dropped, never delivered or waiting ones', async () => {
    const queue = new OutboundQueue(db.pool, 'manual');
    const now = new Date();
    await queue.enqueue(db.pool, deliveries(3, 'manual-target'), now);
    const [failedOne, dropped, waiting] = await queue.claimDue(now, 3, 60_000);
    await queue.recordAttempt(failedOne!, failed, { delivered: false, retryAt: null }, now);
    await queue.cancel(dropped!, 'the target no longer takes deliveries');
    await queue.recordAttempt(waiting!, failed, { delivered: false, retryAt: new Date(now.getTime() + 60_000) }, now);

    expect(await queue.retryNow('acme', 'manual-target', failedOne!.id, now)).toBe(true);
    expect(await queue.retryNow('acme', 'manual-target', dropped!.id, now)).toBe(true);
    expect(await queue.retryNow('acme', 'manual-target', waiting!.id, now)).toBe(false);
    expect(await queue.retryNow('other', 'manual-target', failedOne!.id, now)).toBe(false);
    expect((await queue.claimDue(now, 10, 60_000)).map((d) => d.id).sort()).toEqual([failedOne!.id, dropped!.id].sort());
  });
});


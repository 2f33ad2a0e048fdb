import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../../src/platform/db/migrate.ts';
import { withTransaction, type Pool } from '../../../src/platform/db/pool.ts';
import { CountsAdded, OutboundQueue, type ClaimedDelivery } from '../../../src/platform/outbound/queue.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

const failed = { ok: false, status: 500, body: 'no', durationMs: 3, error: 'receiver answered 500' };
const PROBE_MS = 5_000;

/** The queue with the engine's probe interval. */
class Queue extends OutboundQueue {
  constructor(pool: Pool, feature: string) {
    super(pool, feature, PROBE_MS);
  }
}

describe('outbound delivery queue', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  const deliveries = (count: number, targetId = 'target-1') =>
    Array.from({ length: count }, () => ({ tenantId: 'acme', targetId, eventId: newId(), eventType: 'thing.happened', payload: '{}' }));

  it('enqueues an event once per target, however often the consumer sees it', async () => {
    const queue = new Queue(db.pool, 'once');
    const batch = deliveries(3);
    const now = new Date();
    expect(await queue.enqueue(db.pool, batch, now)).toHaveLength(3);
    const [another] = deliveries(1);
    expect(await queue.enqueue(db.pool, [...batch, another!], now)).toEqual([queue.idOf(another!.targetId, another!.eventId)]);
    expect((await queue.listForTarget('acme', 'target-1', 1, 10)).total).toBe(4);
    expect((await queue.listForTarget('other-tenant', 'target-1', 1, 10)).total).toBe(0);
  });

  it('lets concurrent workers (several instances) claim disjoint deliveries, each held for its lease', async () => {
    const queue = new Queue(db.pool, 'shared');
    const now = new Date();
    await queue.enqueue(db.pool, deliveries(200), now);
    const workers = Array.from({ length: 8 }, () => new Queue(db.pool, 'shared'));
    const claims = await Promise.all(workers.map((worker) => worker.claimDue(now, 40, 60_000)));
    const ids = claims.flat().map((delivery) => delivery.id);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
    expect(await queue.claimDue(now, 40, 60_000)).toEqual([]);
    // When the lease ends (a worker died mid-request), the delivery is due again.
    const afterLease = new Date(now.getTime() + 60_001);
    expect(await queue.claimDue(afterLease, 500, 60_000)).toHaveLength(200);
  });

  const delivered = { ...failed, ok: true, status: 200, error: null };
  const deliveredNow = (delivery: ClaimedDelivery, at: Date) => ({ delivery, result: delivered, startedAt: at });
  /** The consumer's settled rows in a transaction of their own, with their targets' counts; how many were new. */
  const insertDelivered = (queue: Queue, attempts: ReturnType<typeof deliveredNow>[]) =>
    withTransaction(db.pool, async (tx) => {
      const counts = new CountsAdded();
      const added = await queue.insertDelivered(tx, attempts, counts);
      await queue.addCounts(tx, counts);
      return added;
    });
  /** One failed attempt recorded alone: its target's consecutive failed deliveries. */
  const recordFailure = async (queue: Queue, delivery: ClaimedDelivery, retryAt: Date | null, at: Date) =>
    (await queue.recordFailures([{ delivery, result: failed, startedAt: at, retryAt }])).get(delivery.targetId);

  it('reports its backlog for the metrics: every waiting delivery, and how long the oldest due one has waited', async () => {
    const queue = new Queue(db.pool, 'backlog');
    const enqueuedAt = new Date('2026-01-01T00:00:00Z');
    expect(await queue.backlog(enqueuedAt)).toEqual({ depth: 0, oldestDueSeconds: 0 });
    await queue.enqueue(db.pool, deliveries(3), enqueuedAt);
    await queue.enqueue(db.pool, deliveries(2), new Date(enqueuedAt.getTime() + 30_000));
    // 90 s after the first: 5 waiting, the oldest due for 90 s; before any is due, none has waited.
    expect(await queue.backlog(new Date(enqueuedAt.getTime() + 90_000))).toEqual({ depth: 5, oldestDueSeconds: 90 });
    expect(await queue.backlog(new Date(enqueuedAt.getTime() - 1_000))).toEqual({ depth: 5, oldestDueSeconds: 0 });
    // Claimed and delivered deliveries leave the backlog.
    const claimed = await queue.claimDue(new Date(enqueuedAt.getTime() + 10_000), 10, 60_000);
    expect(claimed).toHaveLength(3);
    await queue.recordDelivered(claimed.map((delivery) => deliveredNow(delivery, new Date(enqueuedAt.getTime() + 10_000))));
    expect(await queue.backlog(new Date(enqueuedAt.getTime() + 90_000))).toEqual({ depth: 2, oldestDueSeconds: 60 });
  });

  it('records each attempt and schedules the retry; only a failed delivery (no attempt left) counts, a delivered one resets the count', async () => {
    const queue = new Queue(db.pool, 'attempts');
    const now = new Date();
    await queue.enqueue(db.pool, deliveries(3, 'flaky'), now);
    const [first, second, third] = await queue.claimDue(now, 3, 60_000);
    const retryAt = new Date(now.getTime() + 60_000);
    // A failed attempt with a retry ahead is not a failed delivery.
    expect(await recordFailure(queue, first!, retryAt, now)).toBe(0);
    expect(await recordFailure(queue, second!, null, now)).toBe(1);
    expect(await recordFailure(queue, third!, null, now)).toBe(2);
    const log = await queue.listForTarget('acme', 'flaky', 1, 10);
    expect(log.items.map((entry) => [entry.status, entry.attempt, entry.responseStatus])).toEqual(
      expect.arrayContaining([
        ['retrying', 1, 500],
        ['failed', 1, 500],
        ['failed', 1, 500],
      ]),
    );
    expect(await queue.claimDue(now, 10, 60_000)).toEqual([]);
    const [retry] = await queue.claimDue(retryAt, 10, 60_000);
    expect(retry).toMatchObject({ id: first!.id, attempt: 2 });
    await queue.recordDelivered([deliveredNow(retry!, retryAt)]);
    const { rows } = await db.pool.query('select attempt, response_status from outbound_attempts where delivery_id = $1 order by attempt', [first!.id]);
    expect(rows).toEqual([
      { attempt: 1, response_status: 500 },
      { attempt: 2, response_status: 200 },
    ]);
    await queue.enqueue(db.pool, deliveries(1, 'flaky'), now);
    const [next] = await queue.claimDue(now, 1, 60_000);
    expect(await recordFailure(queue, next!, null, now)).toBe(1);
  });

  it('records a group of failed attempts in one statement, counting per target only the deliveries left without a retry', async () => {
    const queue = new Queue(db.pool, 'grouped');
    const now = new Date();
    await queue.enqueue(db.pool, [...deliveries(3, 'gone'), ...deliveries(2, 'blinking')], now);
    const claimed = await queue.claimDue(now, 5, 60_000);
    const retryAt = new Date(now.getTime() + 60_000);
    const counts = await queue.recordFailures(
      claimed.map((delivery) => ({ delivery, result: failed, startedAt: now, retryAt: delivery.targetId === 'gone' ? null : retryAt })),
    );
    expect(Object.fromEntries(counts)).toEqual({ gone: 3, blinking: 0 });
    expect((await queue.listForTarget('acme', 'gone', 1, 10)).items.map((entry) => entry.status)).toEqual(['failed', 'failed', 'failed']);
    expect((await queue.claimDue(retryAt, 10, 60_000)).map((delivery) => delivery.targetId)).toEqual(['blinking', 'blinking']);
  });

  it("records failed attempts once even when PostgreSQL picks their statement as a deadlock's victim", async () => {
    const queue = new Queue(db.pool, 'crosswise');
    const now = new Date();
    await queue.enqueue(db.pool, [...deliveries(1, 'a-target'), ...deliveries(1, 'b-target')], now);
    const claimed = await queue.claimDue(now, 2, 60_000);
    const retryAt = new Date(now.getTime() + 60_000);
    // Both targets' rows exist, so recording locks them: a-target first, then b-target.
    await queue.recordFailures(claimed.map((delivery) => ({ delivery, result: failed, startedAt: now, retryAt })));
    const retries = await queue.claimDue(retryAt, 2, 60_000);

    // Another writer (a claim's probe) holds b-target and then wants a-target: crosswise.
    const other = await db.pool.connect();
    try {
      await other.query('begin');
      // The recording waits first, so its deadlock check runs first and it is the victim.
      await other.query("set local deadlock_timeout = '10s'");
      await other.query("update outbound_targets set probe_at = now() where feature = 'crosswise' and target_id = 'b-target'");
      const recording = queue.recordFailures(retries.map((delivery) => ({ delivery, result: failed, startedAt: retryAt, retryAt: null })));
      await expect.poll(async () => (await db.pool.query("select 1 from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()")).rowCount).toBe(1);
      await other.query("update outbound_targets set probe_at = now() where feature = 'crosswise' and target_id = 'a-target'");
      await other.query('commit');
      expect(Object.fromEntries(await recording)).toEqual({ 'a-target': 1, 'b-target': 1 });
    } finally {
      await other.query('rollback');
      other.release();
    }
    const { rows } = await db.pool.query('select count(*)::int as n from outbound_attempts where delivery_id = any($1::uuid[]) and attempt = 2', [retries.map((d) => d.id)]);
    expect(rows[0].n).toBe(2);
  });

  it("a target's success after failures makes its waiting retries due at once, except those in flight", async () => {
    const queue = new Queue(db.pool, 'recovery');
    const now = new Date();
    const inHour = new Date(now.getTime() + 3_600_000);
    await queue.enqueue(db.pool, [...deliveries(5, 'recovering'), ...deliveries(1, 'still-down')], now);
    const claimed = await queue.claimDue(now, 6, 60_000);
    const [inFlight, succeeding, ...failing] = claimed.filter((d) => d.targetId === 'recovering');
    for (const delivery of [...failing, ...claimed.filter((d) => d.targetId === 'still-down')]) await recordFailure(queue, delivery, inHour, now);

    expect(await queue.recordDelivered([deliveredNow(succeeding!, now)])).toBe(3);
    const dueNow = await queue.claimDue(new Date(Date.now() + 1_000), 10, 60_000);
    expect(dueNow.map((d) => d.targetId)).toEqual(['recovering', 'recovering', 'recovering']);
    expect(dueNow.map((d) => d.attempt)).toEqual([2, 2, 2]);
    expect(dueNow.map((d) => d.id)).not.toContain(inFlight!.id);
    // A target without failures since its last success is not touched again.
    expect(await queue.recordDelivered(dueNow.map((d) => deliveredNow(d, now)))).toBe(0);
  });

  it("drops a stopped target's waiting deliveries in one statement, leaving those in flight to their workers", async () => {
    const queue = new Queue(db.pool, 'cancel');
    const now = new Date();
    await queue.enqueue(db.pool, deliveries(5, 'stopped'), new Date(now.getTime() - 1_000));
    await queue.enqueue(db.pool, deliveries(2, 'kept'), now);
    const [inFlight] = await queue.claimDue(now, 1, 60_000);
    expect(inFlight!.targetId).toBe('stopped');

    expect(await queue.cancelWaiting('stopped', 'deactivated')).toBe(4);
    const log = await queue.listForTarget('acme', 'stopped', 1, 10);
    expect(log.items.filter((entry) => entry.status === 'cancelled').map((entry) => entry.error)).toEqual(Array(4).fill('deactivated'));
    expect(log.items.find((entry) => entry.id === inFlight!.id)?.status).toBe('pending');
    expect((await queue.claimDue(now, 10, 60_000)).map((d) => d.targetId)).toEqual(['kept', 'kept']);
  });

  it('retries on demand only deliveries that are failed or were dropped, never delivered or waiting ones', async () => {
    const queue = new Queue(db.pool, 'manual');
    const now = new Date();
    await queue.enqueue(db.pool, deliveries(3, 'manual-target'), now);
    const [failedOne, dropped, waiting] = await queue.claimDue(now, 3, 60_000);
    await recordFailure(queue, failedOne!, null, now);
    await queue.cancel(dropped!, 'the target no longer takes deliveries');
    await recordFailure(queue, waiting!, new Date(now.getTime() + 60_000), now);

    expect(await queue.retryNow('acme', 'manual-target', failedOne!.id, now)).toBe(true);
    expect(await queue.retryNow('acme', 'manual-target', dropped!.id, now)).toBe(true);
    expect(await queue.retryNow('acme', 'manual-target', waiting!.id, now)).toBe(false);
    expect(await queue.retryNow('other', 'manual-target', failedOne!.id, now)).toBe(false);
    expect((await queue.claimDue(now, 10, 60_000)).map((d) => d.id).sort()).toEqual([failedOne!.id, dropped!.id].sort());
  });

  it("stores the consumer's answered deliveries settled, once per event and target, and its others born leased", async () => {
    const queue = new Queue(db.pool, 'consumer');
    const now = new Date();
    const [answered, again] = deliveries(2, 'fast').map((delivery) => ({ ...delivery, id: queue.idOf(delivery.targetId, delivery.eventId), attempt: 1 }));
    expect(await insertDelivered(queue, [deliveredNow(answered!, now)])).toBe(1);
    // The same event for the same target a second time (a redelivered batch, another instance) stores nothing.
    expect(await insertDelivered(queue, [deliveredNow({ ...answered! }, now)])).toBe(0);
    expect(await queue.enqueue(db.pool, [answered!], now)).toEqual([]);
    const [entry] = (await queue.listForTarget('acme', 'fast', 1, 10)).items;
    expect(entry).toMatchObject({ id: answered!.id, status: 'delivered', attempt: 1, responseStatus: 200, responseBody: delivered.body, durationMs: 3, nextAttemptAt: null });

    // A delivery still unanswered is queued under the consumer's lease: no worker claims it before the lease ends.
    const leaseEnd = new Date(now.getTime() + 60_000);
    expect(await queue.enqueue(db.pool, [again!], now, { leasedUntil: leaseEnd })).toEqual([again!.id]);
    expect(await queue.claimDue(now, 10, 60_000)).toEqual([]);
    expect((await queue.claimDue(new Date(leaseEnd.getTime() + 1), 10, 60_000)).map((d) => d.id)).toEqual([again!.id]);
  });

  it("stores the consumer's settled rows with every character of their answers, and the time of the last one in the target's counts", async () => {
    const queue = new Queue(db.pool, 'copied');
    const now = new Date();
    // COPY's separators and escapes in the answer body, its \N (null) as text, and a body of none.
    const bodies = ['a\tb\nc\r\nd', 'back\\slash \\N and \\t', '\\N', '', null];
    const settled = deliveries(bodies.length, 'copied').map((delivery) => ({ ...delivery, tenantId: 'tab\there', id: queue.idOf(delivery.targetId, delivery.eventId), attempt: 1 }));
    const answers = settled.map((delivery, index) => ({ delivery, result: { ...delivered, body: bodies[index]!, durationMs: 2 + index }, startedAt: new Date(now.getTime() + index) }));
    expect(await insertDelivered(queue, answers)).toBe(bodies.length);
    const stored = await Promise.all(settled.map((delivery) => queue.get('tab\there', 'copied', delivery.id)));
    expect(stored.map((entry) => [entry?.responseBody, entry?.durationMs, entry?.status, entry?.createdAt])).toEqual(
      answers.map(({ result, startedAt }) => [result.body, result.durationMs, 'delivered', startedAt.toISOString()]),
    );
    expect((await queue.targetStats('tab\there', ['copied'])).get('copied')).toMatchObject({
      deliveryCount: bodies.length,
      lastDeliveryAt: new Date(now.getTime() + 4 + 6).toISOString(),
    });
  });

  it('stores each delivery with its own tenant, target, event, type and body when a batch mixes them', async () => {
    const queue = new Queue(db.pool, 'mixed');
    const now = new Date();
    const [one, two, three] = [newId(), newId(), newId()];
    // Two events with the same body, an event with a body per target, two tenants, two types.
    const batch = [
      { tenantId: 'acme', targetId: 'mixed-a', eventId: one, eventType: 'thing.happened', payload: '{"same":true}' },
      { tenantId: 'acme', targetId: 'mixed-b', eventId: one, eventType: 'thing.happened', payload: '{"same":true}' },
      { tenantId: 'acme', targetId: 'mixed-a', eventId: two, eventType: 'thing.happened', payload: '{"same":true}' },
      { tenantId: 'acme', targetId: 'mixed-a', eventId: three, eventType: 'other.thing', payload: '{"for":"a"}' },
      { tenantId: 'acme', targetId: 'mixed-b', eventId: three, eventType: 'other.thing', payload: '{"for":"b"}' },
      { tenantId: 'globex', targetId: 'mixed-c', eventId: two, eventType: 'thing.happened', payload: '{"same":true}' },
    ];
    const stored = async () =>
      (
        await db.pool.query<{ tenant_id: string; target_id: string; event_id: string; event_type: string; payload: string | null }>(
          `select tenant_id, target_id, event_id, event_type, (select payload from outbound_bodies b where b.id = d.body_id) as payload
             from outbound_deliveries d where feature = $1 order by event_id, target_id`,
          [queue.feature],
        )
      ).rows.map((row) => ({ tenantId: row.tenant_id, targetId: row.target_id, eventId: row.event_id, eventType: row.event_type, payload: row.payload }));
    const sorted = <T extends { eventId: string; targetId: string }>(items: T[]) => [...items].sort((a, b) => a.eventId.localeCompare(b.eventId) || a.targetId.localeCompare(b.targetId));
    const [settled, queued] = [batch.slice(0, 3), batch.slice(3)];
    expect(await insertDelivered(queue, settled.map((delivery) => deliveredNow({ ...delivery, id: queue.idOf(delivery.targetId, delivery.eventId), attempt: 1 }, now)))).toBe(3);
    expect(await queue.enqueue(db.pool, queued, now)).toHaveLength(3);
    // A delivered row is never sent again: it keeps no body.
    expect(await stored()).toEqual(sorted([...settled.map((delivery) => ({ ...delivery, payload: null })), ...queued]));
    expect((await queue.claimDue(now, 10, 60_000)).map(({ tenantId, targetId, eventId, eventType, payload }) => ({ tenantId, targetId, eventId, eventType, payload }))).toEqual(
      expect.arrayContaining(queued),
    );
  });

  it('stores a body once for the deliveries of an event, keeps it while one of them may be sent again, and deletes it after the last is delivered', async () => {
    const queue = new Queue(db.pool, 'bodies');
    const now = new Date();
    const eventId = newId();
    const fanned = ['b-1', 'b-2', 'b-3'].map((targetId) => ({ tenantId: 'acme', targetId, eventId, eventType: 'thing.happened', payload: `{"event":"${eventId}"}` }));
    const bodies = async () => (await db.pool.query<{ payload: string }>('select payload from outbound_bodies where payload = $1', [fanned[0]!.payload])).rows;
    expect(await queue.enqueue(db.pool, fanned, now)).toHaveLength(3);
    // Seen again (the consumer's chunk retried): nothing new, the body not stored twice.
    expect(await queue.enqueue(db.pool, fanned, now)).toEqual([]);
    expect(await bodies()).toHaveLength(1);

    const claimed = await queue.claimDue(now, 10, 60_000);
    expect(claimed.map((delivery) => delivery.payload)).toEqual(fanned.map((delivery) => delivery.payload));
    const [first, second, third] = claimed;
    await recordFailure(queue, first!, null, now);
    await queue.recordDelivered([deliveredNow(second!, now), deliveredNow(third!, now)]);
    // The failed delivery may still be retried by an administrator: its body stays.
    expect(await bodies()).toHaveLength(1);
    expect(await queue.retryNow('acme', first!.targetId, first!.id, now)).toBe(true);
    const [retried] = await queue.claimDue(now, 10, 60_000);
    expect(retried).toMatchObject({ id: first!.id, payload: first!.payload, attempt: 2 });
    await queue.recordDelivered([deliveredNow(retried!, now)]);
    expect(await bodies()).toEqual([]);
    expect((await queue.get('acme', first!.targetId, first!.id))?.status).toBe('delivered');
  });

  it("a target the consumer delivered to after failures has recovered: its waiting retries are due at once", async () => {
    const queue = new Queue(db.pool, 'consumer-recovery');
    const now = new Date();
    await queue.enqueue(db.pool, [...deliveries(2, 'back'), ...deliveries(1, 'healthy')], now);
    const claimed = await queue.claimDue(now, 3, 60_000);
    for (const delivery of claimed.filter((d) => d.targetId === 'back')) await recordFailure(queue, delivery, new Date(now.getTime() + 3_600_000), now);
    await queue.recordDelivered(claimed.filter((d) => d.targetId === 'healthy').map((d) => deliveredNow(d, now)));

    expect(await queue.recover(['healthy'])).toBe(0);
    expect(await queue.recover(['back', 'healthy'])).toBe(2);
    expect((await queue.claimDue(new Date(Date.now() + 1_000), 10, 60_000)).map((d) => d.targetId)).toEqual(['back', 'back']);
    expect(await queue.recover(['back'])).toBe(0);
  });

  /** Deliveries of the target that wait held by its circuit: never attempted, no time of their own. */
  const heldOf = async (queue: Queue, targetId: string) =>
    (await queue.listForTarget('acme', targetId, 1, 100)).items.filter((entry) => entry.status === 'pending' && entry.attempt === 0 && entry.nextAttemptAt === null);
  const versions = async (ids: string[]) =>
    (await db.pool.query<{ id: string; xmin: string }>('select id, xmin::text from outbound_deliveries where id = any($1) order by id', [ids])).rows;

  it("holds a failing target's new deliveries without an attempt, probes it with one of them per interval, and releases the rest unrewritten when a probe gets through", async () => {
    const queue = new Queue(db.pool, 'circuit');
    const now = new Date();
    await queue.enqueue(db.pool, [...deliveries(1, 'down'), ...deliveries(1, 'up')], now);
    const [first] = (await queue.claimDue(now, 10, 60_000)).filter((d) => d.targetId === 'down');
    await recordFailure(queue, first!, new Date(now.getTime() + 3_600_000), now);

    // The circuit is open: new deliveries of 'down' are held, those of a healthy target are not.
    await queue.enqueue(db.pool, [...deliveries(4, 'down'), ...deliveries(1, 'up')], now);
    expect(await heldOf(queue, 'down')).toHaveLength(4);
    expect(await heldOf(queue, 'up')).toEqual([]);
    expect((await queue.claimDue(now, 10, 60_000)).map((d) => d.targetId)).toEqual(['up']);
    // An administrator's test event is not held: it is how one checks a receiver.
    const [testEvent] = await queue.enqueue(db.pool, deliveries(1, 'down'), now, { attemptNow: true });
    const [tested, ...others] = await queue.claimDue(now, 10, 60_000);
    expect([tested!.id, others]).toEqual([testEvent, []]);
    await recordFailure(queue, tested!, new Date(now.getTime() + 3_600_000), now);
    const held = (await heldOf(queue, 'down')).map((entry) => entry.id);

    // Its probe comes after the interval: one held delivery, its first attempt; then none until the next interval.
    const probeTime = new Date(Date.now() + PROBE_MS + 1_000);
    const [probe, ...more] = await queue.claimDue(probeTime, 10, 60_000);
    expect(more).toEqual([]);
    expect(probe).toMatchObject({ targetId: 'down', attempt: 1 });
    expect(await queue.claimDue(probeTime, 10, 60_000)).toEqual([]);
    // A failed probe is an attempt like any: its delivery retries by the schedule, the circuit stays open.
    await recordFailure(queue, probe!, new Date(now.getTime() + 3_600_000), probeTime);
    expect(await heldOf(queue, 'down')).toHaveLength(3);
    const nextProbeTime = new Date(probeTime.getTime() + PROBE_MS + 1_000);
    const [secondProbe] = await queue.claimDue(nextProbeTime, 10, 60_000);
    expect(secondProbe!.targetId).toBe('down');

    // The second probe gets through: the held rows are claimable as they are (no row rewritten), the retries made due.
    const stillHeld = held.filter((id) => id !== probe!.id && id !== secondProbe!.id);
    const before = await versions(stillHeld);
    expect(await queue.recordDelivered([deliveredNow(secondProbe!, nextProbeTime)])).toBe(3);
    expect(await versions(stillHeld)).toEqual(before);
    const drained = await queue.claimDue(nextProbeTime, 10, 60_000);
    expect(drained.map((d) => d.id).sort()).toEqual([...stillHeld, first!.id, probe!.id, testEvent!].sort());
    expect(drained.filter((d) => stillHeld.includes(d.id)).map((d) => d.attempt)).toEqual([1, 1]);
    // New deliveries are no longer held.
    const [fresh] = await queue.enqueue(db.pool, deliveries(1, 'down'), nextProbeTime);
    expect((await queue.get('acme', 'down', fresh!))?.nextAttemptAt).toBe(nextProbeTime.toISOString());
  });

  it('releases the held deliveries of a reactivated target, drops them with a stopped one, and stops looking once a recovered target has none', async () => {
    const queue = new Queue(db.pool, 'circuit-admin');
    const now = new Date();
    await queue.enqueue(db.pool, [...deliveries(1, 'reactivated'), ...deliveries(1, 'stopped')], now);
    for (const delivery of await queue.claimDue(now, 10, 60_000)) await recordFailure(queue, delivery, new Date(now.getTime() + 3_600_000), now);
    await queue.enqueue(db.pool, [...deliveries(2, 'reactivated'), ...deliveries(2, 'stopped')], now);

    expect(await queue.cancelWaiting('stopped', 'deactivated')).toBe(3);
    expect(await heldOf(queue, 'stopped')).toEqual([]);
    await queue.resetFailures('reactivated');
    const released = await queue.claimDue(now, 10, 60_000);
    expect(released.map((d) => [d.targetId, d.attempt])).toEqual([
      ['reactivated', 1],
      ['reactivated', 1],
    ]);
    const recoveredAt = async () => (await db.pool.query("select recovered_at from outbound_targets where feature = 'circuit-admin' and target_id = 'reactivated'")).rows[0].recovered_at;
    // Held rows in flight keep the target looked at (their lease may end unrecorded)...
    await queue.claimDue(new Date(Date.now() + 120_000), 10, 60_000);
    expect(await recoveredAt()).not.toBeNull();
    // ...and once none is left, past the grace for enqueues that read the circuit open, it is not.
    await queue.recordDelivered(released.map((d) => deliveredNow(d, now)));
    await queue.claimDue(new Date(Date.now() + 120_000), 10, 60_000);
    expect(await recoveredAt()).toBeNull();
  });

  /** What the log's reads answered before the counts (migration 0041), counted over the whole log. */
  const countedOverLog = async (feature: string, tenantId: string, targetId: string) => {
    const { rows } = await db.pool.query(
      `select count(*)::int as total, (count(*) filter (where d.status = 'delivered'))::int as "deliveryCount",
              coalesce(sum((select count(*) from outbound_attempts a where a.delivery_id = d.id and a.error is not null)), 0)::int as "errorCount",
              (select a.error from outbound_deliveries d2 join outbound_attempts a on a.delivery_id = d2.id
                where d2.tenant_id = $1 and d2.feature = $2 and d2.target_id = $3 and a.error is not null order by a.started_at desc limit 1) as "lastError",
              max(d.updated_at) filter (where d.status = 'delivered') as "lastDeliveryAt"
         from outbound_deliveries d where d.tenant_id = $1 and d.feature = $2 and d.target_id = $3`,
      [tenantId, feature, targetId],
    );
    const { total, lastDeliveryAt, ...stats } = rows[0];
    return { total, stats: total === 0 ? undefined : { ...stats, lastDeliveryAt: lastDeliveryAt?.toISOString() ?? null } };
  };
  /** The reads' answers (the delivery log's total, the log streams' figures) for one tenant's target. */
  const counted = async (queue: Queue, tenantId: string, targetId: string) => ({
    total: (await queue.listForTarget(tenantId, targetId, 1, 1)).total,
    stats: (await queue.targetStats(tenantId, [targetId])).get(targetId),
  });

  it("answers a target's counts from its own row, the same as counted over its log after every kind of outcome, per tenant", async () => {
    const queue = new Queue(db.pool, 'counted');
    const now = new Date();
    const later = (ms: number) => new Date(now.getTime() + ms);
    const targets = [
      ['acme', 'busy'],
      ['acme', 'down'],
      ['other', 'busy'],
    ] as const;
    const expectCountsAsLog = async (expected: Record<string, number>) => {
      for (const [tenantId, targetId] of targets) {
        const answered = await counted(queue, tenantId, targetId);
        expect(answered).toEqual(await countedOverLog('counted', tenantId, targetId));
        expect(answered.total).toBe(expected[`${tenantId}/${targetId}`] ?? 0);
      }
      const { rows } = await db.pool.query("select tenant_id, target_id, deliveries::int from outbound_target_counts where feature = 'counted' order by 1, 2");
      expect(Object.fromEntries(rows.map((row) => [`${row.tenant_id}/${row.target_id}`, row.deliveries]))).toEqual(expected);
    };
    const deliveriesOf = (count: number, tenantId: string, targetId: string) => deliveries(count, targetId).map((delivery) => ({ ...delivery, tenantId }));

    // The consumer: delivered rows and queued ones in one transaction, counted in its last statement.
    const consumed = deliveriesOf(3, 'acme', 'busy').map((delivery) => ({ ...delivery, id: queue.idOf(delivery.targetId, delivery.eventId), attempt: 1 }));
    const tx = await db.pool.connect();
    try {
      await tx.query('begin');
      const counts = new CountsAdded();
      expect(await queue.insertDelivered(tx, consumed.map((delivery) => deliveredNow(delivery, now)), counts)).toBe(3);
      expect(await queue.enqueue(tx, deliveriesOf(2, 'acme', 'down'), now, { counts })).toHaveLength(2);
      await queue.addCounts(tx, counts);
      await tx.query('commit');
    } finally {
      tx.release();
    }
    // Seen again (with one new): only the new one counted.
    const [fresh] = deliveriesOf(1, 'acme', 'busy').map((delivery) => ({ ...delivery, id: queue.idOf(delivery.targetId, delivery.eventId), attempt: 1 }));
    expect(await insertDelivered(queue, [...consumed, fresh!].map((delivery) => deliveredNow(delivery, later(500))))).toBe(1);
    expect(await insertDelivered(queue, consumed.map((delivery) => deliveredNow(delivery, later(600))))).toBe(0);
    await queue.enqueue(db.pool, deliveriesOf(1, 'other', 'busy'), now);
    await expectCountsAsLog({ 'acme/busy': 4, 'acme/down': 2, 'other/busy': 1 });

    // Retries, a failed delivery, a delivered retry, a duplicate record of it.
    const [first, second] = (await queue.claimDue(now, 10, 60_000)).filter((delivery) => delivery.targetId === 'down');
    await recordFailure(queue, first!, later(1_000), now);
    await recordFailure(queue, second!, null, later(10));
    await expectCountsAsLog({ 'acme/busy': 4, 'acme/down': 2, 'other/busy': 1 });
    const [retry] = await queue.claimDue(later(1_000), 10, 60_000);
    expect(retry).toMatchObject({ id: first!.id, attempt: 2 });
    await queue.recordDelivered([deliveredNow(retry!, later(1_000))]);
    await queue.recordDelivered([deliveredNow(retry!, later(2_000))]);
    await expectCountsAsLog({ 'acme/busy': 4, 'acme/down': 2, 'other/busy': 1 });

    // A late failure or cancellation of a delivery another worker delivered (its lease had ended) leaves it delivered.
    expect(await recordFailure(queue, retry!, later(60_000), later(3_000))).toBe(0);
    await queue.cancel(retry!, 'the target no longer takes deliveries');
    expect((await queue.get('acme', 'down', retry!.id))?.status).toBe('delivered');
    await expectCountsAsLog({ 'acme/busy': 4, 'acme/down': 2, 'other/busy': 1 });

    // An outage: the circuit open, new deliveries held; a cancellation; a manual retry; the drain.
    await queue.enqueue(db.pool, deliveriesOf(3, 'acme', 'down'), later(4_000));
    const [probe] = await queue.claimDue(later(4_000 + PROBE_MS), 10, 60_000);
    await recordFailure(queue, probe!, later(3_600_000), later(4_000 + PROBE_MS));
    expect(await queue.retryNow('acme', 'down', second!.id, later(20_000))).toBe(true);
    const claimed = await queue.claimDue(later(20_000), 10, 60_000);
    const manual = claimed.find((delivery) => delivery.id === second!.id);
    expect(manual).toMatchObject({ attempt: 2 });
    await queue.cancel(manual!, 'the target no longer takes deliveries');
    expect(await queue.retryNow('acme', 'down', second!.id, later(21_000))).toBe(true);
    await expectCountsAsLog({ 'acme/busy': 4, 'acme/down': 5, 'other/busy': 1 });
    // The drain: a probe gets through, the circuit closes, the retries and the held deliveries are sent.
    const probes = claimed.filter((delivery) => delivery !== manual);
    expect(probes).toHaveLength(1);
    await queue.recordDelivered(probes.map((delivery) => deliveredNow(delivery, later(21_000))));
    const drained = await queue.claimDue(later(21_000), 10, 60_000);
    expect(drained.map((delivery) => delivery.id)).toContain(second!.id);
    await queue.recordDelivered(drained.map((delivery) => deliveredNow(delivery, later(22_000))));
    await expectCountsAsLog({ 'acme/busy': 4, 'acme/down': 5, 'other/busy': 1 });
    await queue.enqueue(db.pool, deliveriesOf(1, 'acme', 'down'), later(23_000));
    expect(await queue.cancelWaiting('down', 'deactivated')).toBe(1);
    await expectCountsAsLog({ 'acme/busy': 4, 'acme/down': 6, 'other/busy': 1 });
    expect(await counted(queue, 'other', 'down')).toEqual({ total: 0, stats: undefined });
  });

  it("migration 0041 counts the deliveries already logged (every test's above) as the log's reads counted them", async () => {
    const migration = await readFile(join(MIGRATIONS_DIR, '0041_outbound-target-counts.sql'), 'utf8');
    await db.pool.query('delete from outbound_target_counts');
    await db.pool.query(migration.slice(migration.indexOf('insert into outbound_target_counts')));
    const { rows: targets } = await db.pool.query('select distinct feature, tenant_id, target_id from outbound_deliveries');
    expect(targets.length).toBeGreaterThan(20);
    for (const { feature, tenant_id: tenantId, target_id: targetId } of targets) {
      expect(await counted(new Queue(db.pool, feature), tenantId, targetId)).toEqual(await countedOverLog(feature, tenantId, targetId));
    }
  });
});

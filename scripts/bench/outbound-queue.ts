/**
 * The outbound queue's PostgreSQL cost per delivery, without HTTP: the statements the engine runs,
 * straight against a fresh database, for 10 targets.
 * - happy path: the consumer's settled rows (insertDelivered), chunks of 500 (50 events x 10 targets);
 * - outage: the targets failing (one refused attempt each opens their circuits), then N deliveries
 *   enqueued to them, 500 events at a time (they wait held, without an attempt);
 * - drain: the targets answer again, then claims of 64 and their delivered records until nothing waits.
 * Prints PostgreSQL's CPU (all its processes) and WAL bytes per delivery for each phase: steadier on a
 * busy machine than bench:webhooks' rates.
 * With `--log-rows N`, then: one more target given N deliveries (settled rows, and one in a hundred
 * failed after an attempt in error), and its delivery log's first page with its total and its figures
 * (targetStats, what the log streams show) timed, 5 of each.
 * Usage: npm run bench:outbound-queue [-- --deliveries 50000 --log-rows 300000]
 */
import { loadavg } from 'node:os';
import { newId } from '../../src/platform/ids.ts';
import { withTransaction } from '../../src/platform/db/pool.ts';
import { CountsAdded, OutboundQueue, type ClaimedDelivery } from '../../src/platform/outbound/queue.ts';
import { benchDatabase, fmt, numberOption as option, postgresCpu } from './support.ts';

const total = option('deliveries', 50_000);
const logRows = option('log-rows', 0);
const TARGETS = Array.from({ length: 10 }, (_, i) => `target-${i}`);
const HOUR = 3_600_000;
const refused = { ok: false, status: null, body: null, durationMs: 1, error: 'connect ECONNREFUSED' };
const answered = { ok: true, status: 204, body: '', durationMs: 1, error: null };
const payload = (eventId: string) => JSON.stringify({ id: eventId, type: 'login.failed', timestamp: new Date().toISOString(), data: { userId: null, reason: 'bad_password' } });
const eventsTo = (targets: string[], events: number) =>
  Array.from({ length: events }, () => newId()).flatMap((eventId) => targets.map((targetId) => ({ tenantId: 'platform', targetId, eventId, eventType: 'login.failed', payload: payload(eventId) })));

const db = await benchDatabase();
try {
  const queue = new OutboundQueue(db.pool, 'webhooks', HOUR);
  const cpu = await postgresCpu(db.pool);
  const wal = async () => Number((await db.pool.query<{ wal: string }>("select pg_current_wal_lsn() - '0/0'::pg_lsn as wal")).rows[0]!.wal);
  const measure = async (name: string, phase: () => Promise<unknown>) => {
    const [cpuBefore, walBefore] = [cpu(), await wal()];
    await phase();
    const [cpuAfter, walAfter] = [cpu(), await wal()];
    const cpuMs = cpuBefore === null || cpuAfter === null ? 'unknown' : fmt(((cpuAfter - cpuBefore) * 1000) / total, 4);
    console.log(`${name}: ${cpuMs} ms of PostgreSQL CPU, ${fmt((walAfter - walBefore) / total)} WAL bytes per delivery`);
  };
  console.log(`outbound queue: ${fmt(total)} deliveries to ${TARGETS.length} targets; load average ${loadavg().map((n) => fmt(n, 2)).join(' ')}`);

  await measure('happy path (settled rows)', async () => {
    for (let i = 0; i < total / 500; i++) {
      const deliveries = eventsTo(TARGETS.map((target) => `healthy-${target}`), 50);
      await settled(queue, deliveries);
    }
  });

  // One refused attempt per target opens its circuit.
  await queue.enqueue(db.pool, eventsTo(TARGETS, 1), new Date());
  const opening = await queue.claimDue(new Date(), TARGETS.length, 60_000);
  await queue.recordFailures(opening.map((delivery) => ({ delivery, result: refused, startedAt: new Date(), retryAt: new Date(Date.now() + HOUR) })));
  await measure('outage (deliveries held)', async () => {
    for (let i = 0; i < total / 5_000; i++) await queue.enqueue(db.pool, eventsTo(TARGETS, 500), new Date());
  });

  let drained = 0;
  await measure('drain (recovery, claims, records)', async () => {
    await queue.recover(TARGETS);
    for (;;) {
      const claimed: ClaimedDelivery[] = await queue.claimDue(new Date(), 64, 60_000);
      if (claimed.length === 0) break;
      drained += claimed.length;
      await queue.recordDelivered(claimed.map((delivery) => ({ delivery, result: answered, startedAt: new Date() })));
    }
  });
  console.log(`drained ${fmt(drained)} (the ${TARGETS.length} refused first attempts included); load average ${loadavg().map((n) => fmt(n, 2)).join(' ')}`);
  if (logRows > 0) await logReads(queue);
} finally {
  await db.close();
}

/** The consumer's settled rows (insertDelivered) and their targets' counts, in a transaction as the engine writes them. */
async function settled(queue: OutboundQueue, deliveries: ReturnType<typeof eventsTo>): Promise<void> {
  await withTransaction(db.pool, async (tx) => {
    const counts = new CountsAdded();
    await queue.insertDelivered(tx, deliveries.map((d) => ({ delivery: { ...d, id: queue.idOf(d.targetId, d.eventId), attempt: 1 }, result: answered, startedAt: new Date() })), counts);
    await queue.addCounts(tx, counts);
  });
}

/** --log-rows: a target's log of `logRows` deliveries, and how long its reads take. */
async function logReads(queue: OutboundQueue): Promise<void> {
  const target = 'logged';
  for (let seeded = 0; seeded < logRows; seeded += 5_000) {
    const deliveries = eventsTo([target], Math.min(5_000, logRows - seeded));
    const failing = deliveries.splice(0, deliveries.length / 100);
    await settled(queue, deliveries);
    await queue.enqueue(db.pool, failing, new Date());
    const claimed = await queue.claimDue(new Date(), failing.length, 60_000);
    await queue.recordFailures(claimed.map((delivery) => ({ delivery, result: refused, startedAt: new Date(), retryAt: null })));
  }
  await db.pool.query('vacuum analyze outbound_deliveries, outbound_attempts');
  const timed = async (read: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await read();
      times.push(performance.now() - started);
    }
    return times.map((ms) => fmt(ms, 1)).join(' / ');
  };
  const page = await timed(() => queue.listForTarget('platform', target, 1, 20));
  const stats = await timed(() => queue.targetStats('platform', [target]));
  const { total: logged } = await queue.listForTarget('platform', target, 1, 1);
  console.log(`log reads at ${fmt(logged)} rows of one target: first page with its total ${page} ms; its figures (targetStats) ${stats} ms; load average ${loadavg().map((n) => fmt(n, 2)).join(' ')}`);
}

/**
 * Webhooks benchmark, end to end: events appended at a steady rate, each fanned out to 10
 * subscriptions on a local HTTPS receiver, through the relay, the in-process bus, the delivery
 * queue and the signed POSTs. Prints delivered/s and the event-to-delivery latency (event commit
 * to the receiver's arrival) p50/p99/max, and CPU and SQL statements per delivery.
 * With --outage N the receiver is down for the first N seconds while events flow, then up while
 * they flow for --seconds more: prints the queue's peak depth, how long it took to drain after the
 * receiver came back and at what rate, and how the deliveries ended (the retry schedule is
 * IAM_WEBHOOK_RETRY_SCHEDULE if set, else the real one: 1m, 5m, ...).
 * Every run checks that each event arrived exactly once at each subscription (each has its own URL),
 * and prints the load average (figures on a busy machine are floors).
 * Usage: npm run bench:webhooks [-- --rate 200 --seconds 10 --subscriptions 10 --outage 0]
 */
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../src/platform/clock.ts';
import { systemContext } from '../../src/platform/commands/context.ts';
import { toNewEvents } from '../../src/platform/commands/handle-command.ts';
import { newId } from '../../src/platform/ids.ts';
import type { Pool } from '../../src/platform/db/pool.ts';
import { startHttpsReceiver, type HttpsReceiver } from '../../test/support/https-receiver.ts';
import { benchService } from './service.ts';
import { countStatements } from './statement-counter.ts';
import { fmt, numberOption as option, percentile } from './support.ts';

const rate = option('rate', 200);
const seconds = option('seconds', 10);
const subscriptions = option('subscriptions', 10);
const outageSeconds = option('outage', 0);
const TICK_MS = 20;

async function main(): Promise<void> {
  const receiver = await startHttpsReceiver({ record: false });
  const arrivals: number[] = [];
  const sentAt = new Map<string, number>();
  // Per event and subscription (its URL): how many times it arrived.
  const received = new Map<string, number>();
  receiver.answer((request) => {
    const id = JSON.parse(request.body).id as string;
    const started = sentAt.get(id);
    if (started !== undefined) arrivals.push(Date.now() - started);
    const key = `${id} ${request.url}`;
    received.set(key, (received.get(key) ?? 0) + 1);
    return { status: 204 };
  });
  const retrySchedule = process.env.IAM_WEBHOOK_RETRY_SCHEDULE;
  const bench = await benchService({
    IAM_ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    IAM_OUTBOUND_CA_FILE: receiver.caFile,
    ...(retrySchedule ? { IAM_WEBHOOK_RETRY_SCHEDULE: retrySchedule } : {}),
  });
  try {
    const context = systemContext('platform');
    for (let i = 0; i < subscriptions; i++) {
      await bench.service.webhooks.commands.create('platform', { name: `bench ${i}`, url: `${receiver.url}?subscription=${i}`, events: ['login.failed'], isActive: true }, context);
    }
    // The fan-out reads the subscriptions' read model: wait until it has them all.
    while ((await bench.service.webhooks.queries.list('platform')).length < subscriptions) await sleep(50);
    const appendingSeconds = outageSeconds + seconds;
    console.log(
      `webhooks benchmark (node ${process.version}): ${rate} events/s for ${appendingSeconds} s, each to ${subscriptions} subscriptions` +
        (outageSeconds > 0 ? `; the receiver is down for the first ${outageSeconds} s` : ''),
    );
    console.log(`load average at start: ${loadavg().map((n) => fmt(n, 2)).join(' ')}`);

    const statements = countStatements();
    const cpuBefore = process.cpuUsage();
    const outage = outageSeconds > 0 ? receiverOutage(bench.db.pool, receiver, outageSeconds, () => arrivals.length) : null;
    const total = rate * appendingSeconds;
    const perTick = Math.max(1, Math.round((rate * TICK_MS) / 1000));
    const started = performance.now();
    const appends: Promise<unknown>[] = [];
    for (let appended = 0; appended < total; ) {
      for (let i = 0; i < perTick && appended < total; i++, appended++) {
        const [event] = toNewEvents([{ type: 'LoginFailed', data: { userId: null, reason: 'bad_password' } }], context, systemClock);
        sentAt.set(event!.id, Date.parse(event!.metadata.occurredAt));
        appends.push(bench.store.append(`loginattempt-platform.${newId()}`, [event!]));
      }
      const due = started + (appended / rate) * 1000;
      await sleep(Math.max(0, due - performance.now()));
    }
    await Promise.all(appends);
    const appendSeconds = (performance.now() - started) / 1000;
    const expected = total * subscriptions;
    const giveUpAt = started + (appendingSeconds + 300) * 1000;
    if (outage) await outage.drained(giveUpAt);
    else while (arrivals.length < expected && performance.now() < giveUpAt) await sleep(50);
    const drainSeconds = (performance.now() - started) / 1000;

    const cpu = process.cpuUsage(cpuBefore);
    const statementCount = statements.total();
    const sorted = [...arrivals].sort((a, b) => a - b);
    console.log(`appended ${fmt(total)} events in ${fmt(appendSeconds, 2)} s (${fmt(total / appendSeconds)} events/s)`);
    console.log(`delivered ${fmt(arrivals.length)} of ${fmt(expected)} in ${fmt(drainSeconds, 2)} s (${fmt(arrivals.length / drainSeconds)} deliveries/s)`);
    console.log(`event -> delivery latency: p50 ${fmt(percentile(sorted, 50))} ms, p99 ${fmt(percentile(sorted, 99))} ms, max ${fmt(sorted.at(-1) ?? NaN)} ms`);
    if (outage) await outage.report();
    const counts = [...received.values()];
    const missing = expected - received.size;
    const duplicated = counts.filter((n) => n > 1).length;
    console.log(
      `exactly once per event and subscription: ${missing === 0 && duplicated === 0 ? 'yes' : 'NO'} (${fmt(received.size)} of ${fmt(expected)} arrived, ${fmt(missing)} missing, ${fmt(duplicated)} more than once)`,
    );
    // Costs per delivery that a loaded machine does not skew: this process's CPU (service and receiver) and SQL statements.
    const delivered = Math.max(1, arrivals.length);
    console.log(`per delivery: ${fmt(((cpu.user + cpu.system) / 1000) / delivered, 3)} ms CPU (this process), ${fmt(statementCount / delivered, 2)} SQL statements; the most frequent:`);
    for (const line of statements.top(delivered)) console.log(line);
    // Where the time went: from the event to its queue row (relay, bus, fan-out), then to the attempt's end.
    const { rows } = await bench.db.pool.query<{ queued_p50: number; queued_p99: number; sent_p50: number; sent_p99: number }>(
      `select percentile_cont(0.5) within group (order by queued) as queued_p50, percentile_cont(0.99) within group (order by queued) as queued_p99,
              percentile_cont(0.5) within group (order by sent) as sent_p50, percentile_cont(0.99) within group (order by sent) as sent_p99
         from (select extract(epoch from d.created_at - (e.metadata->>'occurredAt')::timestamptz) * 1000 as queued,
                      extract(epoch from a.started_at - d.created_at) * 1000 + a.duration_ms as sent
                 from outbound_deliveries d join events e on e.event_id = d.event_id::uuid
                 join outbound_attempts a on a.delivery_id = d.id and a.attempt = 1) stages`,
    );
    const stages = rows[0]!;
    console.log(`  event -> queued: p50 ${fmt(stages.queued_p50)} ms, p99 ${fmt(stages.queued_p99)} ms; queued -> answered: p50 ${fmt(stages.sent_p50)} ms, p99 ${fmt(stages.sent_p99)} ms`);
    console.log(`load average at end: ${loadavg().map((n) => fmt(n, 2)).join(' ')}`);
  } finally {
    await bench.close();
    await receiver.close();
  }
}

/**
 * The receiver down from now for `seconds`, then up; the queue's depth sampled meanwhile. The
 * backlog is what was enqueued before the receiver came back: `drained` resolves once the events
 * are all appended and nothing waits for an attempt any more, and the drain time is when the last
 * of the backlog was settled.
 */
function receiverOutage(pool: Pool, receiver: HttpsReceiver, seconds: number, received: () => number) {
  const waiting = async (enqueuedBefore: Date | null) =>
    Number(
      (
        await pool.query<{ n: string }>(
          "select count(*) as n from outbound_deliveries where feature = 'webhooks' and next_attempt_at is not null and ($1::timestamptz is null or created_at < $1)",
          [enqueuedBefore],
        )
      ).rows[0]!.n,
    );
  let peak = 0;
  let upAt = null as { instant: Date; at: number } | null;
  let atUp = { backlog: 0, received: 0 };
  let backlogDrained = null as { at: number; received: number } | null;
  const down = receiver.goDown();
  const up = sleep(seconds * 1000).then(async () => {
    await down;
    await receiver.comeUp();
    const cameUp = { instant: new Date(), at: performance.now() };
    upAt = cameUp;
    atUp = { backlog: await waiting(cameUp.instant), received: received() };
  });
  let appended = false;
  let giveUpAt = Infinity;
  const sampling = (async () => {
    for (;;) {
      const depth = await waiting(null);
      peak = Math.max(peak, depth);
      if (upAt && !backlogDrained && (await waiting(upAt.instant)) === 0) backlogDrained = { at: performance.now(), received: received() };
      if ((appended && backlogDrained && depth === 0) || performance.now() > giveUpAt) return;
      await sleep(250);
    }
  })();
  return {
    drained(deadline: number): Promise<void> {
      appended = true;
      giveUpAt = deadline;
      return sampling;
    },
    async report(): Promise<void> {
      await up;
      const { rows } = await pool.query<{ status: string; n: string }>("select status, count(*) as n from outbound_deliveries where feature = 'webhooks' group by status order by status");
      const active = (await pool.query<{ n: string }>('select count(*) as n from webhooks where is_active')).rows[0]!.n;
      const cameBack = upAt!;
      console.log(`receiver down for ${seconds} s while events flowed: queue depth peak ${fmt(peak)}; backlog ${fmt(atUp.backlog)} deliveries when it came back`);
      if (!backlogDrained) console.log(`  backlog NOT drained ${fmt((performance.now() - cameBack.at) / 1000, 1)} s after the receiver came back`);
      else {
        const { at, received: receivedThen } = backlogDrained;
        const drainSeconds = (at - cameBack.at) / 1000;
        const arrived = receivedThen - atUp.received;
        console.log(`  backlog drained ${fmt(drainSeconds, 1)} s after it came back: ${fmt(arrived)} received meanwhile (${fmt(arrived / Math.max(drainSeconds, 0.001))} deliveries/s, new events included)`);
      }
      console.log(`  deliveries by status: ${rows.map((row) => `${row.status} ${fmt(Number(row.n))}`).join(', ')}; received in all ${fmt(received())}; subscriptions still active: ${active}`);
    },
  };
}

await main();

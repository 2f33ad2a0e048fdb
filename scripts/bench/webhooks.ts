/**
 * Webhooks benchmark, end to end: events appended at a steady rate, each fanned out to 10
 * subscriptions on a local HTTPS receiver, through the relay, the in-process bus, the delivery
 * queue and the signed POSTs. Prints delivered/s and the event-to-delivery latency (event commit
 * to the receiver's arrival) p50/p99/max.
 * Usage: npm run bench:webhooks [-- --rate 200 --seconds 10 --subscriptions 10]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../src/platform/clock.ts';
import { systemContext } from '../../src/platform/commands/context.ts';
import { toNewEvents } from '../../src/platform/commands/handle-command.ts';
import { newId } from '../../src/platform/ids.ts';
import { startHttpsReceiver } from '../../test/support/https-receiver.ts';
import { benchService } from './service.ts';
import { countStatements } from './statement-counter.ts';
import { fmt, numberOption as option, percentile } from './support.ts';

const rate = option('rate', 200);
const seconds = option('seconds', 10);
const subscriptions = option('subscriptions', 10);
const TICK_MS = 20;

async function main(): Promise<void> {
  const receiver = await startHttpsReceiver();
  const arrivals: number[] = [];
  const sentAt = new Map<string, number>();
  receiver.answer((request) => {
    const id = JSON.parse(request.body).id as string;
    const started = sentAt.get(id);
    if (started !== undefined) arrivals.push(Date.now() - started);
    return { status: 204 };
  });
  const bench = await benchService({ IAM_ALLOW_PRIVATE_NETWORK_TARGETS: 'true', IAM_OUTBOUND_CA_FILE: receiver.caFile });
  try {
    const context = systemContext('platform');
    for (let i = 0; i < subscriptions; i++) {
      await bench.service.webhooks.commands.create('platform', { name: `bench ${i}`, url: receiver.url, events: ['login.failed'], isActive: true }, context);
    }
    // The fan-out reads the subscriptions' read model: wait until it has them all.
    while ((await bench.service.webhooks.queries.list('platform')).length < subscriptions) await sleep(50);
    console.log(`webhooks benchmark (node ${process.version}): ${rate} events/s for ${seconds} s, each to ${subscriptions} subscriptions`);

    const statements = countStatements();
    const cpuBefore = process.cpuUsage();
    const total = rate * seconds;
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
    while (arrivals.length < expected && performance.now() - started < (seconds + 120) * 1000) await sleep(50);
    const drainSeconds = (performance.now() - started) / 1000;

    const cpu = process.cpuUsage(cpuBefore);
    const statementCount = statements.total();
    const sorted = [...arrivals].sort((a, b) => a - b);
    console.log(`appended ${fmt(total)} events in ${fmt(appendSeconds, 2)} s (${fmt(total / appendSeconds)} events/s)`);
    console.log(`delivered ${fmt(arrivals.length)} of ${fmt(expected)} in ${fmt(drainSeconds, 2)} s (${fmt(arrivals.length / drainSeconds)} deliveries/s)`);
    console.log(`event -> delivery latency: p50 ${fmt(percentile(sorted, 50))} ms, p99 ${fmt(percentile(sorted, 99))} ms, max ${fmt(sorted.at(-1) ?? NaN)} ms`);
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
  } finally {
    await bench.close();
    await receiver.close();
  }
}

await main();

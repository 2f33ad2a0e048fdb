/**
 * Webhooks benchmark, end to end: events appended at a steady rate, each fanned out to 10
 * subscriptions on a local HTTPS receiver, through the relay, the in-process bus, the delivery
 * queue and the signed POSTs. The receiver (webhook-receiver.ts) and the event generator
 * (event-generator.ts) run in processes of their own, so this process is the service alone.
 * Prints delivered/s and the event-to-delivery latency (event timestamp to the receiver's arrival)
 * p50/p99/max, the TLS connections the receiver accepted, and per delivery the CPU of each process
 * and the service's SQL statements.
 * With --outage N the receiver is down for the first N seconds while events flow, then up while
 * they flow for --seconds more: prints the queue's peak depth, how long it took to drain after the
 * receiver came back and at what rate, and how the deliveries ended (the retry schedule is
 * IAM_WEBHOOK_RETRY_SCHEDULE if set, else the real one: 1m, 5m, ...).
 * Every run checks that each event arrived exactly once at each subscription (each has its own URL),
 * and prints the load average (figures on a busy machine are floors).
 * The service's event loop (its main thread) is one core at most: its CPU per delivery is printed
 * apart, as it bounds the rate whatever the machine has left. `--cpu-profile DIR` writes the
 * service's CPU profile of the measured window to DIR.
 * With `--probes`, each of the outage run's depth counts also notes the outbound tables' size on
 * disk, this process's resident memory, and how long the service took to answer /health/ready and
 * to read the first page of one subscription's delivery log (what else a long outage may degrade).
 * The run gives up `--give-up` seconds (300) after the last event was appended.
 * With `--subscriptions 0` nothing is delivered and the figures are per event: what the events
 * themselves cost (appended, relayed, projected), the part of each delivery's figures that is not
 * the delivery's.
 * Usage: npm run bench:webhooks [-- --rate 200 --seconds 10 --subscriptions 10 --outage 0 --give-up 300 --probes --cpu-profile DIR]
 */
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemContext } from '../../src/platform/commands/context.ts';
import type { Pool } from '../../src/platform/db/pool.ts';
import { benchService } from './service.ts';
import { generateEvents } from './event-generator.ts';
import { countStatements } from './statement-counter.ts';
import { startReceiverProcess, type ReceiverProcess } from './webhook-receiver.ts';
import { cpuProfiler } from './cpu-profile.ts';
import { eventLoopCpu, fmt, numberOption as option, percentile, postgresCpu, textOption } from './support.ts';

const rate = option('rate', 200);
const seconds = option('seconds', 10);
const subscriptions = option('subscriptions', 10);
const outageSeconds = option('outage', 0);
/** Events appended together in one transaction, `rate / burst` times a second (0: one append each, 50 ticks a second). */
const burst = option('burst', 0);
/** How long the run waits, after the last event was appended, for the deliveries (and the drain) before it gives up. */
const giveUpSeconds = option('give-up', 300);
const probes = process.argv.includes('--probes');
const profileDir = textOption('cpu-profile');
/**
 * How often the outage run counts the waiting deliveries (its peak and its report): a count reads
 * every waiting row's index entry and most of their heap pages (hundreds of thousands after an
 * outage), which taken every second was as busy in PostgreSQL as the claim or the recording of the
 * drain it measures.
 */
const DEPTH_EVERY_MS = 10_000;
/** How often the outage run looks whether the backlog and the queue are empty (a look stops at the first waiting row). */
const SAMPLE_EVERY_MS = 1_000;

async function main(): Promise<void> {
  // The receiver runs in a process of its own: this process's CPU is then the service's (and the event generator's).
  const receiver = await startReceiverProcess();
  const retrySchedule = process.env.IAM_WEBHOOK_RETRY_SCHEDULE;
  const bench = await benchService({
    IAM_ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    IAM_OUTBOUND_CA_FILE: receiver.caFile,
    ...(retrySchedule ? { IAM_WEBHOOK_RETRY_SCHEDULE: retrySchedule } : {}),
  });
  try {
    const context = systemContext('platform');
    const secrets: string[] = [];
    const hookIds: string[] = [];
    for (let i = 0; i < subscriptions; i++) {
      const created = await bench.service.webhooks.commands.create(
        'platform',
        { name: `bench ${i}`, url: `${receiver.url}?subscription=${i}`, events: ['login.failed'], isActive: true },
        context,
      );
      secrets.push(created.signingSecret);
      hookIds.push(created.webhookId);
    }
    await receiver.knowSecrets(secrets);
    // The fan-out reads the subscriptions' read model: wait until it has them all.
    while ((await bench.service.webhooks.queries.list('platform')).length < subscriptions) await sleep(50);
    const appendingSeconds = outageSeconds + seconds;
    console.log(
      `webhooks benchmark (node ${process.version}): ${rate} events/s for ${appendingSeconds} s, each to ${subscriptions} subscriptions` +
        (burst > 0 ? `, appended ${burst} at a time (one transaction)` : '') +
        (outageSeconds > 0 ? `; the receiver is down for the first ${outageSeconds} s` : ''),
    );
    console.log(`load average at start: ${loadavg().map((n) => fmt(n, 2)).join(' ')}`);

    const statements = countStatements();
    const writesBefore = await tableWrites(bench.db.pool);
    const postgresCpuSeconds = await postgresCpu(bench.db.pool);
    const postgresBefore = postgresCpuSeconds();
    const cpuBefore = process.cpuUsage();
    const eventLoopBefore = eventLoopCpu();
    const profile = profileDir ? await cpuProfiler() : null;
    const probe = probes ? () => serviceProbe(bench, hookIds[0]!) : null;
    const outage = outageSeconds > 0 ? receiverOutage(bench.db.pool, receiver, outageSeconds, probe) : null;
    const total = rate * appendingSeconds;
    const started = performance.now();
    // Events come from a process of their own, as from another instance: this process's CPU is the service's.
    const generated = await generateEvents({ databaseUrl: bench.db.url, rate, total, burst });
    const appendSeconds = generated.seconds;
    const expected = total * subscriptions;
    const giveUpAt = started + (appendingSeconds + giveUpSeconds) * 1000;
    if (outage) await outage.drained(giveUpAt, expected);
    else while (receiver.arrived() < expected && performance.now() < giveUpAt) await sleep(50);
    const drainSeconds = (performance.now() - started) / 1000;

    const cpu = process.cpuUsage(cpuBefore);
    const eventLoopAfter = eventLoopCpu();
    if (profile) console.log(`service CPU profile: ${await profile.stop(profileDir!, `webhooks-${rate}x${subscriptions}`)}`);
    const postgresAfter = postgresCpuSeconds();
    const statementCount = statements.total();
    const report = await receiver.report();
    const arrivals = report.latencies;
    const sorted = [...arrivals].sort((a, b) => a - b);
    console.log(`appended ${fmt(total)} events in ${fmt(appendSeconds, 2)} s (${fmt(total / appendSeconds)} events/s)`);
    console.log(`delivered ${fmt(arrivals.length)} of ${fmt(expected)} in ${fmt(drainSeconds, 2)} s (${fmt(arrivals.length / drainSeconds)} deliveries/s)`);
    console.log(`event -> delivery latency: p50 ${fmt(percentile(sorted, 50))} ms, p99 ${fmt(percentile(sorted, 99))} ms, max ${fmt(sorted.at(-1) ?? NaN)} ms`);
    if (outage) await outage.report();
    const missing = expected - report.distinct;
    console.log(
      `exactly once per event and subscription: ${missing === 0 && report.duplicated === 0 ? 'yes' : 'NO'} (${fmt(report.distinct)} of ${fmt(expected)} arrived, ${fmt(missing)} missing, ${fmt(report.duplicated)} more than once)`,
    );
    if (missing > 0) {
      // Where the missing ones stopped: events with no delivery row, and whether the consumer group recorded them applied.
      const { rows: lost } = await bench.db.pool.query<{ in_inbox: string; not_in_inbox: string }>(
        `select count(*) filter (where i.event_id is not null) as in_inbox, count(*) filter (where i.event_id is null) as not_in_inbox
           from events e left join inbox i on i.event_id = e.event_id::text and i.group_id like '%.webhooks'
          where e.type = 'LoginFailed' and not exists (select from outbound_deliveries d where d.feature = 'webhooks' and d.event_id = e.event_id::text)`,
      );
      console.log(`  events without a delivery row: ${lost[0]!.in_inbox} applied by the consumer group, ${lost[0]!.not_in_inbox} never applied`);
    }
    console.log(`signatures checked by the receiver (one arrival in 100): ${fmt(report.signatures.valid)} of ${fmt(report.signatures.checked)} valid`);
    console.log(`TLS connections the receiver accepted: ${fmt(report.connections.accepted)} (${fmt(report.connections.resumed)} resumed sessions)`);
    // Costs per delivery that a loaded machine does not skew: each process's CPU, and SQL statements.
    // With --subscriptions 0 the unit is the event: what the events cost without any delivery (the
    // generator's appends, the relay, the bus, the read models), the rest of each delivery's cost.
    const unit = subscriptions > 0 ? 'delivery' : 'event';
    const delivered = subscriptions > 0 ? Math.max(1, arrivals.length) : total;
    const perDelivery = (cpuMs: number) => fmt(cpuMs / delivered, 3);
    console.log(
      `per ${unit}: ${perDelivery((cpu.user + cpu.system) / 1000)} ms CPU in the service process ` +
        `(${eventLoopBefore === null || eventLoopAfter === null ? 'unknown' : perDelivery((eventLoopAfter - eventLoopBefore) * 1000)} ms in its event loop), ` +
        `${perDelivery(report.cpuMs)} ms in the receiver process, ${perDelivery(generated.cpuMs)} ms in the event generator, ` +
        `${postgresBefore === null || postgresAfter === null ? 'unknown' : perDelivery((postgresAfter - postgresBefore) * 1000)} ms in PostgreSQL (the generator's appends included); ` +
        `${fmt(statementCount / delivered, 2)} SQL statements; the most frequent:`,
    );
    for (const line of statements.top(delivered)) console.log(line);
    await printTableWrites(bench.db.pool, writesBefore, delivered, unit);
    // Where the time went: from the event to its first send (the consumer's own attempt) or its queue
    // row (relay, bus, fan-out), then to the answer being recorded, for deliveries settled at the first attempt.
    const { rows } = await bench.db.pool.query<{ queued_p50: number; queued_p99: number; sent_p50: number; sent_p99: number; first: string }>(
      `select percentile_cont(0.5) within group (order by queued) as queued_p50, percentile_cont(0.99) within group (order by queued) as queued_p99,
              percentile_cont(0.5) within group (order by sent) as sent_p50, percentile_cont(0.99) within group (order by sent) as sent_p99, count(*) as first
         from (select extract(epoch from d.created_at - (e.metadata->>'occurredAt')::timestamptz) * 1000 as queued,
                      extract(epoch from d.updated_at - d.created_at) * 1000 as sent
                 from outbound_deliveries d join events e on e.event_id = d.event_id::uuid
                where d.feature = 'webhooks' and d.status = 'delivered' and d.attempts = 1) stages`,
    );
    const stages = rows[0]!;
    if (Number(stages.first) > 0) console.log(
      `  ${fmt(Number(stages.first))} delivered at the first attempt: event -> sent or queued: p50 ${fmt(stages.queued_p50)} ms, p99 ${fmt(stages.queued_p99)} ms; ` +
        `-> recorded: p50 ${fmt(stages.sent_p50)} ms, p99 ${fmt(stages.sent_p99)} ms`,
    );
    const errors = await bench.db.pool.query<{ error: string; n: string }>(
      "select coalesce(error, 'status ' || response_status) as error, count(*) as n from outbound_attempts where error is not null or response_status >= 300 group by 1 order by 2 desc limit 3",
    );
    if (errors.rows.length > 0) console.log(`  failed attempts: ${errors.rows.map((row) => `${fmt(Number(row.n))} "${row.error}"`).join(', ')}`);
    console.log(`load average at end: ${loadavg().map((n) => fmt(n, 2)).join(' ')}`);
  } finally {
    await bench.close();
    await receiver.close();
  }
}

/** What PostgreSQL wrote for the queue: rows per table (inserted, updated, of which HOT) and WAL bytes. */
interface TableWrites {
  wal: bigint;
  tables: Map<string, { ins: number; upd: number; hot: number; del: number }>;
}

const QUEUE_TABLES = ['outbound_deliveries', 'outbound_bodies', 'outbound_attempts', 'outbound_targets', 'inbox'];

async function tableWrites(pool: Pool): Promise<TableWrites> {
  const wal = (await pool.query<{ wal: string }>("select pg_current_wal_lsn() - '0/0'::pg_lsn as wal")).rows[0]!.wal;
  // Backends hand their row counts to the shared statistics at most once a second, and an idle one
  // within 10 s.
  await sleep(11_000);
  const { rows } = await pool.query<{ relname: string; ins: string; upd: string; hot: string; del: string }>(
    `select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del from pg_stat_user_tables where relname = any($1)`,
    [QUEUE_TABLES],
  );
  return {
    wal: BigInt(Math.round(Number(wal))),
    tables: new Map(rows.map((row) => [row.relname, { ins: Number(row.ins), upd: Number(row.upd), hot: Number(row.hot), del: Number(row.del) }])),
  };
}

/** Rows written per delivery in each queue table, and WAL bytes per delivery (all of it: the generator's appends and the projections included). */
async function printTableWrites(pool: Pool, before: TableWrites, delivered: number, unit: string): Promise<void> {
  const after = await tableWrites(pool);
  const per = (n: number) => fmt(n / delivered, 3);
  const lines = QUEUE_TABLES.flatMap((table) => {
    const a = after.tables.get(table);
    const b = before.tables.get(table) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
    if (!a) return [];
    return [`${table} ${per(a.ins - b.ins)} inserted, ${per(a.upd - b.upd)} updated (${per(a.hot - b.hot)} HOT), ${per(a.del - b.del)} deleted`];
  });
  console.log(`rows per ${unit}: ${lines.join('; ')}; WAL ${fmt(Number(after.wal - before.wal) / delivered, 0)} bytes per ${unit} in all`);
}

/** --probes: the outbound tables' size, this process's memory, and two of the service's answers timed. */
async function serviceProbe(bench: Awaited<ReturnType<typeof benchService>>, hookId: string): Promise<string> {
  const { rows } = await bench.db.pool.query<{ bytes: string }>(
    "select sum(pg_total_relation_size(c.oid)) as bytes from pg_class c where c.relkind = 'r' and c.relname like 'outbound%'",
  );
  const timed = async (request: () => Promise<unknown>) => {
    const start = performance.now();
    const failed = await request().then(() => '', (error: unknown) => ` (${String(error).slice(0, 80)})`);
    return `${fmt(performance.now() - start, 0)}${failed}`;
  };
  const ready = await timed(() => bench.inject('GET', '/health/ready'));
  const log = await timed(() => bench.service.webhooks.deliveries('platform', hookId, 1, 20));
  return `tables ${fmt(Number(rows[0]!.bytes) / 2 ** 20)} MB, rss ${fmt(process.memoryUsage.rss() / 2 ** 20)} MB, ready ${ready} ms, log page ${log} ms`;
}

/**
 * The receiver down from now for `seconds`, then up; the queue's depth sampled meanwhile (with
 * `probe`'s notes at each count). The
 * backlog is what was enqueued before the receiver came back: `drained` resolves once the events
 * are all appended, every delivery arrived and nothing waits for an attempt any more (or at the
 * deadline), and the drain time is when the last of the backlog was settled.
 */
function receiverOutage(pool: Pool, receiver: ReceiverProcess, seconds: number, probe: (() => Promise<string>) | null) {
  const received = receiver.arrived;
  const waitingRows = "from outbound_deliveries where feature = 'webhooks' and next_attempt_at is not null and ($1::timestamptz is null or created_at < $1)";
  const waiting = async (enqueuedBefore: Date | null) =>
    Number((await pool.query<{ n: string }>(`select count(*) as n ${waitingRows}`, [enqueuedBefore])).rows[0]!.n);
  const anyWaiting = async (enqueuedBefore: Date | null) =>
    (await pool.query<{ any: boolean }>(`select exists (select ${waitingRows}) as any`, [enqueuedBefore])).rows[0]!.any;
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
  let expected = Infinity;
  // The queue's depth over time: one sample every DEPTH_EVERY_MS, printed by report().
  const depths: { seconds: number; depth: number; received: number; probed?: string }[] = [];
  const startedAt = performance.now();
  const sampling = (async () => {
    for (;;) {
      const seconds = (performance.now() - startedAt) / 1000;
      if (depths.length === 0 || seconds - depths.at(-1)!.seconds >= DEPTH_EVERY_MS / 1000) {
        const depth = await waiting(null);
        peak = Math.max(peak, depth);
        depths.push({ seconds, depth, received: received(), ...(probe ? { probed: await probe() } : {}) });
      }
      if (upAt && !backlogDrained && !(await anyWaiting(upAt.instant))) backlogDrained = { at: performance.now(), received: received() };
      // Events still on their way through the relay and the bus have no queue row yet: an empty
      // queue is the end only once every delivery arrived.
      if ((appended && backlogDrained && received() >= expected && !(await anyWaiting(null))) || performance.now() > giveUpAt) return;
      await sleep(SAMPLE_EVERY_MS);
    }
  })();
  return {
    drained(deadline: number, deliveries: number): Promise<void> {
      appended = true;
      giveUpAt = deadline;
      expected = deliveries;
      return sampling;
    },
    async report(): Promise<void> {
      await up;
      const { rows } = await pool.query<{ status: string; n: string }>("select status, count(*) as n from outbound_deliveries where feature = 'webhooks' group by status order by status");
      const active = (await pool.query<{ n: string }>('select count(*) as n from webhooks where is_active')).rows[0]!.n;
      const cameBack = upAt!;
      console.log(`receiver down for ${seconds} s while events flowed: queue depth peak ${fmt(peak)} (of counts every ${DEPTH_EVERY_MS / 1000} s); backlog ${fmt(atUp.backlog)} deliveries when it came back`);
      if (!backlogDrained) console.log(`  backlog NOT drained ${fmt((performance.now() - cameBack.at) / 1000, 1)} s after the receiver came back`);
      else {
        const { at, received: receivedThen } = backlogDrained;
        const drainSeconds = (at - cameBack.at) / 1000;
        const arrived = receivedThen - atUp.received;
        console.log(`  backlog drained ${fmt(drainSeconds, 1)} s after it came back: ${fmt(arrived)} received meanwhile (${fmt(arrived / Math.max(drainSeconds, 0.001))} deliveries/s, new events included)`);
      }
      console.log(`  queue depth over time (s since the outage began: waiting deliveries, received so far):`);
      const perLine = probe ? 1 : 6;
      for (let i = 0; i < depths.length; i += perLine) {
        const line = depths.slice(i, i + perLine).map(({ seconds: at, depth, received: got, probed }) => `${fmt(at, 0)} s: ${fmt(depth)}, ${fmt(got)}${probed ? `; ${probed}` : ''}`);
        console.log(`    ${line.join(' | ')}`);
      }
      console.log(`  deliveries by status: ${rows.map((row) => `${row.status} ${fmt(Number(row.n))}`).join(', ')}; received in all ${fmt(received())}; subscriptions still active: ${active}`);
    },
  };
}

await main();

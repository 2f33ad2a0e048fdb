import { finished } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Pool, PoolClient, Queryable } from '../db/pool.ts';
import { isUuid, nameBasedId, nameBasedIds } from '../ids.ts';
import { integerArray, textArray, timestampArray } from './array-parameters.ts';
import type { AttemptResult } from './https-client.ts';

export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed' | 'cancelled';

export interface NewDelivery {
  tenantId: string;
  targetId: string;
  eventId: string;
  eventType: string;
  /** The body, sent unchanged by every attempt. */
  payload: string;
}

/** A delivery a worker holds for one attempt (the lease of its claim), or the consumer's before its row exists. */
export interface ClaimedDelivery extends NewDelivery {
  /** `OutboundQueue.idOf(targetId, eventId)`: the queue stores it as given (computed once per delivery). */
  id: string;
  /** The number of this attempt, 1 for the first. */
  attempt: number;
}

export interface DeliveryRecord {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: DeliveryStatus;
  responseStatus: number | null;
  responseBody: string | null;
  durationMs: number | null;
  error: string | null;
  createdAt: string;
  nextAttemptAt: string | null;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: string;
  attempts: number;
  status: DeliveryStatus;
  last_response_status: number | null;
  last_response_body: string | null;
  last_duration_ms: number | null;
  last_error: string | null;
  created_at: Date;
  /** Infinity (pg's reading of 'infinity') while the delivery is held by its target's open circuit. */
  next_attempt_at: Date | number | null;
}

const toRecord = (row: DeliveryRow): DeliveryRecord => ({
  id: row.id,
  eventId: row.event_id,
  eventType: row.event_type,
  attempt: row.attempts,
  status: row.status,
  responseStatus: row.last_response_status,
  responseBody: row.last_response_body,
  durationMs: row.last_duration_ms,
  error: row.last_error,
  createdAt: row.created_at.toISOString(),
  // A held delivery has no time of its own: it goes when its target answers a probe.
  nextAttemptAt: row.next_attempt_at === null || typeof row.next_attempt_at === 'number' ? null : row.next_attempt_at.toISOString(),
});

export interface TargetStats {
  deliveryCount: number;
  errorCount: number;
  lastError: string | null;
  lastDeliveryAt: string | null;
}

/** A delivered attempt waiting to be recorded. */
export interface DeliveredAttempt {
  delivery: ClaimedDelivery;
  result: AttemptResult;
  startedAt: Date;
}

/** A failed attempt waiting to be recorded: the next at `retryAt`, or none left (null). */
export interface FailedAttempt extends DeliveredAttempt {
  retryAt: Date | null;
}

/** The first six parameters of an attempts' unnest: delivery id, attempt, started at, duration, status, body. */
const attemptColumns = (attempts: DeliveredAttempt[]) => [
  textArray(attempts.map((a) => a.delivery.id)),
  integerArray(attempts.map((a) => a.delivery.attempt)),
  timestampArray(attempts.map((a) => a.startedAt)),
  integerArray(attempts.map((a) => a.result.durationMs)),
  integerArray(attempts.map((a) => a.result.status)),
  textArray(attempts.map((a) => a.result.body)),
];

/**
 * The columns `deliveries` share, as parameters that send each value once: per event (its tenant,
 * id, type and body, which its deliveries to several targets share) and per target, a list of the
 * distinct values, and per delivery its 1-based places in those lists. PostgreSQL parses a chunk's
 * 50 events and 10 targets rather than its 500 deliveries' copies of them (about a sixth of a
 * delivered row's insert: docs/performance.md, "Webhooks (session 12, webhooks)"). An event is known
 * by its body: deliveries with the same body and event share a place (a feature may send different
 * bodies of one event to different targets), and `firstOf` is each place's first delivery.
 */
function sharedColumns(deliveries: readonly NewDelivery[]) {
  const eventPlaces = new Map<string, number>();
  const targetPlaces = new Map<string, number>();
  const events: NewDelivery[] = [];
  const firstOf: number[] = [];
  const targets: string[] = [];
  const eventOf: number[] = [];
  const targetOf: number[] = [];
  for (const [index, delivery] of deliveries.entries()) {
    let event = eventPlaces.get(delivery.payload);
    const known = event === undefined ? undefined : events[event - 1]!;
    if (!known || known.eventId !== delivery.eventId || known.tenantId !== delivery.tenantId || known.eventType !== delivery.eventType) {
      event = events.push(delivery);
      firstOf.push(index);
      eventPlaces.set(delivery.payload, event);
    }
    eventOf.push(event!);
    let target = targetPlaces.get(delivery.targetId);
    if (target === undefined) {
      target = targets.push(delivery.targetId);
      targetPlaces.set(delivery.targetId, target);
    }
    targetOf.push(target);
  }
  return {
    events,
    firstOf,
    eventOf: integerArray(eventOf),
    targetOf: integerArray(targetOf),
    tenants: textArray(events.map((event) => event.tenantId)),
    eventIds: textArray(events.map((event) => event.eventId)),
    eventTypes: textArray(events.map((event) => event.eventType)),
    targets: textArray(targets),
  };
}

/**
 * A delivery's shared columns (tenant_id, target_id, event_id, event_type) read from sharedColumns'
 * lists: `$n` is the first of four parameters (tenants, targets, event ids, types), `row` the
 * unnest's alias with `event` and `target` places. The body is not among them: a row refers to it
 * (body_id, outbound_bodies) while it may be sent again, and a delivered row has none (migration 0040).
 */
const SHARED_COLUMNS = 'tenant_id, target_id, event_id, event_type';
const sharedValues = (n: number, row: string) =>
  `($${n}::text[])[${row}.event], ($${n + 1}::text[])[${row}.target], ($${n + 2}::text[])[${row}.event], ($${n + 3}::text[])[${row}.event]`;
const sharedParameters = (shared: ReturnType<typeof sharedColumns>) => [shared.tenants, shared.targets, shared.eventIds, shared.eventTypes];

// Statements that update rows by id name them in an array (`id = any(...)`) as well as in the join
// with their input: joined only, a group of a few hundred against a table the planner's statistics
// have not caught up with was planned as a hash join over a scan of the whole queue (85 ms for 256
// rows of 50,000), where the array makes it one primary-key look-up per row.

/** A row no worker holds: never leased, or its lease ended (its worker died or gave it up). */
const UNLEASED = (alias: string, now: string) => `(${alias}.leased_until is null or ${alias}.leased_until <= ${now})`;

/** A target whose circuit closes (it answered again, or was reactivated) notes when, if it had held deliveries to release. */
const CLOSE_CIRCUIT = `failing_since = null, recovered_at = case when failing_since is not null then now() else recovered_at end`;

/**
 * What rows new to the log add to their targets' counts (outbound_target_counts, migration 0041),
 * gathered by a transaction's statements (enqueue, insertDelivered) for its `addCounts`: one entry
 * per tenant and target.
 */
export class CountsAdded {
  /** Per tenant and target; the last delivery's time in epoch milliseconds. */
  readonly byTarget = new Map<string, { tenantId: string; targetId: string; deliveries: number; delivered: number; lastDeliveryAt: number | null }>();

  add(tenantId: string, targetId: string, deliveries: number, delivered: number, lastDeliveryAt: number | null): void {
    const key = `${tenantId}\n${targetId}`;
    const counts = this.byTarget.get(key);
    if (!counts) this.byTarget.set(key, { tenantId, targetId, deliveries, delivered, lastDeliveryAt });
    else {
      counts.deliveries += deliveries;
      counts.delivered += delivered;
      if (lastDeliveryAt !== null && (counts.lastDeliveryAt === null || lastDeliveryAt > counts.lastDeliveryAt)) counts.lastDeliveryAt = lastDeliveryAt;
    }
  }
}

/**
 * A CTE `counted` adding to the targets' counts (outbound_target_counts) what `source` answers per
 * target: target_id, tenant_id, deliveries, delivered, last_delivery_at, errors, last_error,
 * last_error_at. The rows are locked in the targets' order, so that statements counting at once wait
 * for each other rather than deadlock; a row that adds nothing is not rewritten. The counts are
 * those the delivery log's reads answer: its rows, the delivered ones (a delivered delivery stays
 * delivered: no statement changes its status again) and the latest one's time, the attempts that
 * ended in an error and the latest one's error.
 */
const addCounts = (feature: string, source: string) => `counted as (
         insert into outbound_target_counts as c (target_id, feature, tenant_id, deliveries, delivered, last_delivery_at, errors, last_error, last_error_at)
         select s.target_id, ${feature}, s.tenant_id, s.deliveries, s.delivered, s.last_delivery_at, s.errors, s.last_error, s.last_error_at
           from (${source}) as s (target_id, tenant_id, deliveries, delivered, last_delivery_at, errors, last_error, last_error_at)
          where s.deliveries <> 0 or s.delivered <> 0 or s.errors <> 0
          order by s.target_id, s.tenant_id
         on conflict (target_id, feature, tenant_id) do update
            set deliveries = c.deliveries + excluded.deliveries, delivered = c.delivered + excluded.delivered,
                last_delivery_at = greatest(c.last_delivery_at, excluded.last_delivery_at), errors = c.errors + excluded.errors,
                last_error = case when excluded.last_error_at > c.last_error_at or c.last_error_at is null then coalesce(excluded.last_error, c.last_error) else c.last_error end,
                last_error_at = greatest(c.last_error_at, excluded.last_error_at)
       )`;

/**
 * CTEs ending a statement's list, given the parameters holding the feature and the targets delivered
 * to: a target that had failed since its last success goes back to 0 consecutive failed deliveries,
 * its circuit closes (its held deliveries become claimable as they are, see claimDue) and its
 * waiting retries are due at once. `made_due` has a row per retry made due (a busy, healthy
 * target's row is not rewritten).
 */
const recovery = (feature: string, targets: string) => `recovered as (
         update outbound_targets set consecutive_failures = 0, ${CLOSE_CIRCUIT}
          where feature = ${feature} and target_id = any(${targets}) and (consecutive_failures <> 0 or failing_since is not null)
          returning target_id
       ), made_due as (
         update outbound_deliveries d set next_attempt_at = now(), updated_at = now()
           from recovered r
          where d.feature = ${feature} and d.target_id = r.target_id and d.next_attempt_at > now() and d.next_attempt_at < 'infinity'
            and d.status = 'retrying' and ${UNLEASED('d', 'now()')}
          returning 1
       )`;

/** insertDelivered's COPY: a settled row's columns (next_attempt_at, leased_until, body_id, last_error are null). */
const COPY_DELIVERED = `copy outbound_deliveries (id, feature, ${SHARED_COLUMNS}, status, attempts, last_response_status, last_response_body,
                                         last_duration_ms, created_at, updated_at) from stdin`;

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A value in COPY's text format: null as \N, a backslash and the row and column separators escaped. */
function copyValue(value: string | number | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  return /[\\\n\r\t]/.test(value) ? value.replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c]!) : value;
}

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = '23505';

/** PostgreSQL's deadlock_detected: the victim's statement was rolled back whole. */
const DEADLOCK_DETECTED = '40P01';
const DEADLOCK_TRIES = 3;

/**
 * Runs one self-contained statement again when PostgreSQL chose it as a deadlock's victim: recording
 * attempts locks targets' rows in target order, while a claim's probe locks the failing targets in
 * the table's order, so the two can meet crosswise during an outage. Nothing of the victim was
 * written, so running it again records its attempts once.
 */
async function retryingDeadlocks<T>(statement: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await statement();
    } catch (error) {
      if (tries >= DEADLOCK_TRIES || (error as { code?: unknown }).code !== DEADLOCK_DETECTED) throw error;
    }
  }
}

/** RFC 9562's namespace for URLs, of which each feature's delivery ids take a namespace of their own. */
const URL_NAMESPACE = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

/** The durable queue of one feature (webhooks, log streams) in table outbound_deliveries. */
export class OutboundQueue {
  /** This feature's delivery ids, in a name space of their own. */
  private readonly ids: (name: string) => string;

  /**
   * `probeIntervalMs`: while a target's circuit is open (it failed an attempt and has not answered
   * since), one of its held deliveries is sent this often as a probe.
   */
  constructor(
    private readonly pool: Pool,
    readonly feature: string,
    private readonly probeIntervalMs: number,
  ) {
    this.ids = nameBasedIds(nameBasedId(URL_NAMESPACE, feature));
  }

  /**
   * The id of the delivery of an event to a target, the same wherever and however often it is
   * computed: the primary key alone keeps each event to one delivery per target.
   */
  idOf(targetId: string, eventId: string): string {
    return this.ids(`${targetId}\n${eventId}`);
  }

  /**
   * Inside the consumer's inbox transaction: a delivery per event and target, once. Answers the new
   * rows' ids. With `leasedUntil` the rows are born claimed (an attempt of this instance is under
   * way, the consumer's own): due again only when the lease ends. Otherwise a delivery to a target
   * whose circuit is open (it failed an attempt and has not answered since) is held: it waits,
   * without an attempt, until a probe of the target gets through (claimDue); with `attemptNow`
   * (an administrator's test event) it is due at once all the same. The targets' counts grow in the
   * same statement, or with `counts` the new rows' counts are added to it for the transaction's
   * `addCounts` (see there).
   */
  async enqueue(
    tx: Queryable,
    deliveries: (NewDelivery | ClaimedDelivery)[],
    now: Date,
    options: { leasedUntil?: Date; attemptNow?: boolean; counts?: CountsAdded } = {},
  ): Promise<string[]> {
    if (deliveries.length === 0) return [];
    const { counts } = options;
    const leasedUntil = options.leasedUntil ?? null;
    const shared = sharedColumns(deliveries);
    const ids = deliveries.map((d) => ('id' in d ? d.id : this.idOf(d.targetId, d.eventId)));
    // Without `counts` the new rows are counted in the statement: all pending, none delivered, no error yet.
    const countedHere = counts
      ? ''
      : `, ${addCounts('$1', 'select target_id, tenant_id, count(*), 0, null::timestamptz, 0, null::text, null::timestamptz from inserted group by target_id, tenant_id')}`;
    // Each body once, named by its first delivery's id (the same however often the event is seen),
    // and stored only when a delivery that refers to it is new.
    const { rows } = await tx.query<{ id: string; tenant_id: string; target_id: string }>(
      `with inserted as (
         insert into outbound_deliveries (id, feature, ${SHARED_COLUMNS}, body_id, status, next_attempt_at, leased_until, created_at, updated_at)
         select d.id, $1, d.tenant_id, d.target_id, d.event_id, d.event_type, d.body_id, 'pending',
                case when $4::timestamptz is null and not $5 and t.failing_since is not null then 'infinity' else $2::timestamptz end, $4, $2, $2
           from (select u.id, ${sharedValues(6, 'u')}, ($12::uuid[])[u.event] from unnest($3::uuid[], $10::int[], $11::int[]) as u (id, event, target))
                as d (id, ${SHARED_COLUMNS}, body_id)
           left join outbound_targets t on t.feature = $1 and t.target_id = d.target_id
         on conflict (id) do nothing
         returning id, body_id, tenant_id, target_id
       ), bodies as (
         insert into outbound_bodies (id, payload)
         select b.id, b.payload from unnest($12::uuid[], $13::text[]) as b (id, payload)
          where b.id in (select body_id from inserted)
         on conflict (id) do nothing
       )${countedHere}
       select id${counts ? ', tenant_id, target_id' : ''} from inserted`,
      [
        this.feature,
        now,
        textArray(ids),
        leasedUntil,
        options.attemptNow ?? false,
        ...sharedParameters(shared),
        shared.eventOf,
        shared.targetOf,
        textArray(shared.firstOf.map((index) => ids[index]!)),
        textArray(shared.events.map((event) => event.payload)),
      ],
    );
    if (counts) {
      for (const row of rows) counts.add(row.tenant_id, row.target_id, 1, 0, null);
    }
    return rows.map((row) => row.id);
  }

  /**
   * Inside the consumer's inbox transaction: deliveries the consumer attempted itself and that were
   * answered 2xx, stored settled (no claim, no update). Such a row is the record of its only attempt
   * (attempt 1, the answer, its duration; created_at is when it was sent), so it has no
   * outbound_attempts row: those hold the attempts of deliveries that needed a retry or were sent by
   * a worker. It is never sent again, so its body is not stored. Answers how many were new.
   * Their counts go to `counts`, for the transaction's `addCounts`.
   * The rows are written with COPY: PostgreSQL inserts them into the heap a page at a time (a WAL
   * record a page rather than a row), which `insert ... select` never does. COPY has no `on conflict`:
   * a row whose id is there already (another transaction's delivery of the same event to the same
   * target) fails it whole, and then, inside the savepoint, the same rows go through insertNew.
   */
  async insertDelivered(tx: PoolClient, attempts: DeliveredAttempt[], counts: CountsAdded): Promise<number> {
    if (attempts.length === 0) return 0;
    await tx.query('savepoint settled_rows');
    try {
      const copy = tx.query(copyFrom(COPY_DELIVERED));
      copy.end(this.settledRows(attempts));
      await finished(copy);
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
      await tx.query('rollback to savepoint settled_rows; release savepoint settled_rows');
      return this.insertNew(tx, attempts, counts);
    }
    await tx.query('release savepoint settled_rows');
    // updated_at as stored: started_at plus the whole milliseconds of the attempt.
    for (const { delivery, result, startedAt } of attempts) counts.add(delivery.tenantId, delivery.targetId, 1, 1, startedAt.getTime() + result.durationMs);
    return attempts.length;
  }

  /** Settled rows in COPY's text format, in COPY_DELIVERED's columns. */
  private settledRows(attempts: DeliveredAttempt[]): string {
    const feature = copyValue(this.feature);
    // A chunk's attempts start and end within a few milliseconds: each instant formatted once.
    const instants = new Map<number, string>();
    const instant = (ms: number) => {
      let text = instants.get(ms);
      if (text === undefined) instants.set(ms, (text = new Date(ms).toISOString()));
      return text;
    };
    let rows = '';
    for (const { delivery, result, startedAt } of attempts) {
      const { id, tenantId, targetId, eventId, eventType, attempt } = delivery;
      const started = startedAt.getTime();
      rows +=
        `${id}\t${feature}\t${copyValue(tenantId)}\t${copyValue(targetId)}\t${copyValue(eventId)}\t${copyValue(eventType)}\tdelivered\t${attempt}\t` +
        `${copyValue(result.status)}\t${copyValue(result.body)}\t${result.durationMs}\t${instant(started)}\t${instant(started + result.durationMs)}\n`;
    }
    return rows;
  }

  /**
   * insertDelivered's rows when some may be there already (`on conflict do nothing`): the counts are
   * read back as the rows this transaction inserted, so `tx` must be a transaction, outside any
   * savepoint.
   */
  private async insertNew(tx: PoolClient, attempts: DeliveredAttempt[], counts: CountsAdded): Promise<number> {
    const shared = sharedColumns(attempts.map((a) => a.delivery));
    const columns = attemptColumns(attempts);
    await tx.query(
      `insert into outbound_deliveries (id, feature, ${SHARED_COLUMNS}, status, attempts, next_attempt_at,
                                        last_response_status, last_response_body, last_duration_ms, created_at, updated_at)
       select id, $7, ${sharedValues(8, 't')}, 'delivered', attempt, null,
              response_status, response_body, duration_ms, started_at, started_at + make_interval(secs => duration_ms / 1000.0)
         from unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $12::int[], $13::int[])
              as t (id, attempt, started_at, duration_ms, response_status, response_body, event, target)
       on conflict (id) do nothing`,
      [...columns, this.feature, ...sharedParameters(shared), shared.eventOf, shared.targetOf],
    );
    const { rows } = await tx.query<{ tenant_id: string; target_id: string; deliveries: number; last_delivery_at: Date }>(
      `select tenant_id, target_id, count(*)::int as deliveries, max(updated_at) as last_delivery_at from outbound_deliveries
        where id = any($1::uuid[]) and xmin = pg_current_xact_id()::xid group by tenant_id, target_id`,
      [columns[0]],
    );
    for (const row of rows) counts.add(row.tenant_id, row.target_id, row.deliveries, row.deliveries, row.last_delivery_at.getTime());
    return rows.reduce((sum, row) => sum + row.deliveries, 0);
  }

  /**
   * The counts of the rows a transaction added with `counts` (enqueue, insertDelivered), added to
   * their targets' as its last statement: statements that each added their own would lock the
   * targets' counts in an order per statement, and two transactions (the consumer's chunks) could
   * each hold a count the other waits for. Here they wait for each other only until the commit.
   */
  async addCounts(tx: Queryable, counts: CountsAdded): Promise<void> {
    if (counts.byTarget.size === 0) return;
    const entries = [...counts.byTarget.values()];
    await tx.query({
      // Named: planned once per connection (a chunk's other statements are planned at each run).
      name: 'outbound_add_counts',
      text: `with ${addCounts(
        '$1',
        `select target_id, tenant_id, deliveries, delivered, last_delivery_at, 0, null::text, null::timestamptz
           from unnest($2::text[], $3::text[], $4::int[], $5::int[], $6::timestamptz[]) as a (tenant_id, target_id, deliveries, delivered, last_delivery_at)`,
      )} select`,
      values: [
        this.feature,
        textArray(entries.map((c) => c.tenantId)),
        textArray(entries.map((c) => c.targetId)),
        integerArray(entries.map((c) => c.deliveries)),
        integerArray(entries.map((c) => c.delivered)),
        timestampArray(entries.map((c) => (c.lastDeliveryAt === null ? null : new Date(c.lastDeliveryAt)))),
      ],
    });
  }

  /**
   * Claims up to `limit` deliveries for one attempt each: due ones (new, retries, leases that ended),
   * then held ones: one per target whose circuit is open and whose probe is due (the probe: its
   * answer closes the circuit or keeps it open another probe interval), and those of targets that
   * recovered, taken as they are (a recovery rewrites none of them). Rows other workers hold are
   * skipped; the claim sets the row's lease (`leased_until`, in no index, so the update is HOT) and
   * the transaction ends at once: a worker that dies before recording its attempt leaves the row
   * claimable again when the lease ends.
   */
  async claimDue(now: Date, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const { rows } = await this.pool.query<{
      id: string;
      tenant_id: string;
      target_id: string;
      event_id: string;
      event_type: string;
      payload: string;
      attempts: number;
    }>({
      // Migration 0038: the statement, planned once per connection through the indexes. Named, like
      // events_append: the call's own plan is a function scan, which no table's growth can stale.
      name: 'outbound_claim_due',
      text: 'select * from outbound_claim_due($1, $2, $3, $4, $5)',
      values: [this.feature, now, new Date(now.getTime() + leaseMs), limit, new Date(now.getTime() + this.probeIntervalMs)],
    });
    return rows.map((row) => ({
      id: row.id,
      tenantId: row.tenant_id,
      targetId: row.target_id,
      eventId: row.event_id,
      eventType: row.event_type,
      payload: row.payload,
      attempt: row.attempts + 1,
    }));
  }

  /**
   * Records failed attempts in one statement: each attempt, its delivery's retry at `retryAt`, or
   * with null the delivery failed (its retry schedule is exhausted). Answers, per target, its
   * consecutive failed deliveries, which only a failed delivery raises: during an outage the
   * target's deliveries wait in their retry slots, however many attempts fail meanwhile. A target
   * that was not failing opens its circuit: its next deliveries are held, and one of them probes
   * it after the probe interval.
   */
  async recordFailures(failures: FailedAttempt[]): Promise<Map<string, number>> {
    if (failures.length === 0) return new Map();
    // A delivery another worker delivered meanwhile (this one's lease had ended) stays delivered.
    const { rows } = await retryingDeadlocks(() => this.pool.query<{ target_id: string; consecutive_failures: number }>(
      `with input as (
         select * from unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[], $8::timestamptz[], $9::text[], $12::text[])
                as t (id, attempt, started_at, duration_ms, response_status, response_body, error, retry_at, target_id, tenant_id)
       ), attempt as (
         insert into outbound_attempts (delivery_id, attempt, started_at, duration_ms, response_status, response_body, error)
         select id, attempt, started_at, duration_ms, response_status, response_body, error from input on conflict do nothing
         returning delivery_id, started_at, error
       ), delivery as (
         update outbound_deliveries d set attempts = i.attempt, status = case when i.retry_at is null then 'failed' else 'retrying' end,
                next_attempt_at = i.retry_at, leased_until = null, last_response_status = i.response_status,
                last_response_body = i.response_body, last_duration_ms = i.duration_ms, last_error = i.error, updated_at = now()
           from input i where d.id = any($1::uuid[]) and d.id = i.id and d.status <> 'delivered'
       ), ${addCounts(
         '$10',
         `select i.target_id, i.tenant_id, 0, 0, null::timestamptz, count(*), (array_agg(a.error order by a.started_at desc))[1], max(a.started_at)
            from attempt a join input i on i.id = a.delivery_id where a.error is not null group by i.target_id, i.tenant_id`,
       )}
       insert into outbound_targets (feature, target_id, consecutive_failures, failing_since, probe_at)
       select $10, target_id, count(*) filter (where retry_at is null), min(started_at), now() + make_interval(secs => $11 / 1000.0)
         from input group by target_id order by target_id
       on conflict (feature, target_id) do update
          set consecutive_failures = outbound_targets.consecutive_failures + excluded.consecutive_failures,
              failing_since = coalesce(outbound_targets.failing_since, excluded.failing_since),
              probe_at = case when outbound_targets.failing_since is null then excluded.probe_at else outbound_targets.probe_at end
       returning target_id, consecutive_failures`,
      [
        ...attemptColumns(failures),
        textArray(failures.map((f) => f.result.error)),
        timestampArray(failures.map((f) => f.retryAt)),
        textArray(failures.map((f) => f.delivery.targetId)),
        this.feature,
        this.probeIntervalMs,
        textArray(failures.map((f) => f.delivery.tenantId)),
      ],
    ));
    return new Map(rows.map((row) => [row.target_id, row.consecutive_failures]));
  }

  /**
   * Records delivered attempts in one statement: the deliveries settled (one another worker delivered
   * meanwhile stays as that worker recorded it), and the attempts of those
   * that needed more than one (a first attempt's record is its delivery's row, as with
   * insertDelivered: a held delivery sent after an outage costs no attempt row). A target
   * among them that had failed since its last success has recovered: its consecutive failed
   * deliveries go back to 0 and its waiting retries are due at once, so the backlog of an outage
   * drains now rather than in the retry slots (a busy, healthy target's row is not rewritten).
   * Answers how many retries were made due.
   */
  async recordDelivered(attempts: DeliveredAttempt[]): Promise<number> {
    if (attempts.length === 0) return 0;
    const { rows } = await retryingDeadlocks(() => this.pool.query<{ due: number; bodies: string[] }>(
      `with input as (
         select t.*, d.body_id from unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[])
                as t (id, attempt, started_at, duration_ms, response_status, response_body)
           left join outbound_deliveries d on d.id = any($1::uuid[]) and d.id = t.id
       ), attempt as (
         insert into outbound_attempts (delivery_id, attempt, started_at, duration_ms, response_status, response_body, error)
         select id, attempt, started_at, duration_ms, response_status, response_body, null from input where attempt > 1 on conflict do nothing
       ), delivery as (
         update outbound_deliveries d set attempts = i.attempt, status = 'delivered', next_attempt_at = null, leased_until = null, body_id = null,
                last_response_status = i.response_status, last_response_body = i.response_body, last_duration_ms = i.duration_ms,
                last_error = null, updated_at = now()
           from input i where d.id = any($1::uuid[]) and d.id = i.id and d.status <> 'delivered'
          returning d.tenant_id, d.target_id, d.updated_at
       ), ${addCounts(
         '$7',
         `select target_id, tenant_id, 0, count(*), max(updated_at), 0, null::text, null::timestamptz from delivery group by target_id, tenant_id`,
       )}, ${recovery('$7', '$8')}
       select (select count(*) from made_due)::int as due, array(select distinct body_id from input where body_id is not null) as bodies`,
      [...attemptColumns(attempts), this.feature, [...new Set(attempts.map((a) => a.delivery.targetId))]],
    ));
    await this.dropBodies(rows[0]!.bodies);
    return rows[0]!.due;
  }

  /**
   * Deletes the bodies no delivery refers to any more, after the statement that dropped their last
   * references committed: of two workers that record the last deliveries of one body at once, the
   * later look sees both committed (a look inside the recording's own statement would see the other's
   * row as it was, and neither would delete). A body whose look never came (the process died between
   * the two) stays, unreferenced: it is never sent.
   */
  private async dropBodies(bodyIds: string[]): Promise<void> {
    if (bodyIds.length === 0) return;
    await retryingDeadlocks(() => this.pool.query(
      `delete from outbound_bodies b
        where b.id = any($1::uuid[]) and not exists (select from outbound_deliveries d where d.body_id = b.id)`,
      [bodyIds],
    ));
  }

  /**
   * The targets delivered to by the consumer itself (insertDelivered): those among them that had
   * failed since their last success have recovered, as in recordDelivered. Answers how many retries
   * were made due.
   */
  async recover(targetIds: string[]): Promise<number> {
    if (targetIds.length === 0) return 0;
    const { rows } = await this.pool.query<{ due: number }>(`with ${recovery('$1', '$2')} select count(*)::int as due from made_due`, [this.feature, targetIds]);
    return rows[0]!.due;
  }

  /** Gives a claimed delivery back unattempted (shutdown): claimable again at once (a held one stays held), for any instance. */
  async release(delivery: ClaimedDelivery): Promise<void> {
    await this.pool.query('update outbound_deliveries set leased_until = null where id = $1', [delivery.id]);
  }

  /** The target no longer takes deliveries (deleted, deactivated): the delivery is dropped, unless another worker delivered it meanwhile. */
  async cancel(delivery: ClaimedDelivery, reason: string): Promise<void> {
    await this.pool.query(
      `update outbound_deliveries set status = 'cancelled', next_attempt_at = null, leased_until = null, last_error = $2, updated_at = now()
        where id = $1 and status <> 'delivered'`,
      [delivery.id, reason],
    );
  }

  /**
   * The target no longer takes deliveries (deactivated, paused, deleted): all its waiting deliveries
   * (held ones included) are dropped in one statement. Those in flight are left to their workers,
   * which drop them when they see the target. Answers how many were dropped.
   */
  async cancelWaiting(targetId: string, reason: string): Promise<number> {
    const { rowCount } = await this.pool.query(
      `update outbound_deliveries set status = 'cancelled', next_attempt_at = null, last_error = $3, updated_at = now()
        where feature = $1 and target_id = $2 and next_attempt_at is not null and ${UNLEASED('outbound_deliveries', 'now()')}`,
      [this.feature, targetId, reason],
    );
    return rowCount ?? 0;
  }

  /** Makes a failed or cancelled delivery of the target due now; false when there is no such delivery. */
  async retryNow(tenantId: string, targetId: string, deliveryId: string, now: Date): Promise<boolean> {
    if (!isUuid(deliveryId)) return false;
    const { rowCount } = await this.pool.query(
      `update outbound_deliveries set status = 'retrying', next_attempt_at = $5, updated_at = $5
        where tenant_id = $1 and feature = $2 and target_id = $3 and id = $4 and status in ('failed', 'cancelled')`,
      [tenantId, this.feature, targetId, deliveryId, now],
    );
    return (rowCount ?? 0) > 0;
  }

  async get(tenantId: string, targetId: string, deliveryId: string): Promise<DeliveryRecord | null> {
    if (!isUuid(deliveryId)) return null;
    const { rows } = await this.pool.query<DeliveryRow>(
      'select * from outbound_deliveries where tenant_id = $1 and feature = $2 and target_id = $3 and id = $4',
      [tenantId, this.feature, targetId, deliveryId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** A target's deliveries, newest first; the total is the target's count (outbound_target_counts), not a count of its log. */
  async listForTarget(tenantId: string, targetId: string, page: number, limit: number): Promise<{ items: DeliveryRecord[]; total: number }> {
    const params = [tenantId, this.feature, targetId];
    const [{ rows }, count] = await Promise.all([
      this.pool.query<DeliveryRow>(
        `select * from outbound_deliveries where tenant_id = $1 and feature = $2 and target_id = $3
          order by created_at desc, id desc limit ${limit} offset ${(page - 1) * limit}`,
        params,
      ),
      this.pool.query<{ deliveries: string }>('select deliveries from outbound_target_counts where target_id = $3 and feature = $2 and tenant_id = $1', params),
    ]);
    return { items: rows.map(toRecord), total: Number(count.rows[0]?.deliveries ?? 0) };
  }

  /**
   * Per target of the tenant with deliveries: deliveries made, failed attempts, the last failure's
   * error and the last delivery's time (log streams show them), from its counts.
   */
  async targetStats(tenantId: string, targetIds: string[]): Promise<Map<string, TargetStats>> {
    const { rows } = await this.pool.query<{ target_id: string; delivered: string; errors: string; last_error: string | null; last_delivery_at: Date | null }>(
      `select target_id, delivered, errors, last_error, last_delivery_at from outbound_target_counts
        where target_id = any($3) and feature = $2 and tenant_id = $1`,
      [tenantId, this.feature, targetIds],
    );
    return new Map(
      rows.map((row) => [
        row.target_id,
        { deliveryCount: Number(row.delivered), errorCount: Number(row.errors), lastError: row.last_error, lastDeliveryAt: row.last_delivery_at?.toISOString() ?? null },
      ]),
    );
  }

  /** A target that came back (reactivated) starts counting failed deliveries afresh, its circuit closed. */
  async resetFailures(targetId: string): Promise<void> {
    await this.pool.query(`update outbound_targets set consecutive_failures = 0, ${CLOSE_CIRCUIT} where feature = $1 and target_id = $2`, [this.feature, targetId]);
  }

  /** Deliveries waiting for an attempt, and how long the oldest due one has waited (seconds). */
  async backlog(now: Date): Promise<{ depth: number; oldestDueSeconds: number }> {
    const { rows } = await this.pool.query<{ depth: string; oldest: Date | null }>(
      `select count(*) as depth, min(next_attempt_at) filter (where next_attempt_at <= $2) as oldest
         from outbound_deliveries where feature = $1 and next_attempt_at is not null`,
      [this.feature, now],
    );
    const oldest = rows[0]?.oldest;
    return { depth: Number(rows[0]?.depth ?? 0), oldestDueSeconds: oldest ? Math.max(0, (now.getTime() - oldest.getTime()) / 1000) : 0 };
  }
}

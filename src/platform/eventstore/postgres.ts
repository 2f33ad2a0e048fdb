import type pg from 'pg';
import { IdempotencyConflictError, WrongExpectedVersionError } from './errors.ts';
import { GroupCommitter } from './group-commit.ts';
import { NotificationListener } from './postgres-listener.ts';
import { PollingSubscription, type TailPage } from './polling-subscription.ts';
import type {
  AppendResult,
  EventStore,
  NewEvent,
  RecordedEvent,
  StreamAppend,
  SubscribeOptions,
  Subscription,
  ExpectedRevision,
  TenantEventsQuery,
} from './port.ts';

const CHANNEL = 'iam_events';
const UNIQUE_VIOLATION = '23505';
/** The position encoding leaves 20 bits for an event's ordinal in its transaction (a whole group). */
const MAX_EVENTS_PER_APPEND = 100_000;
/** Append groups written at the same time: 4 measured best on 2 cores (scripts/bench/eventstore.ts --in-flight). */
const GROUP_COMMIT_IN_FLIGHT = 4;

interface EventRow {
  position: string;
  event_id: string;
  stream_id: string;
  revision: string;
  type: string;
  data: unknown;
  metadata: RecordedEvent['metadata'];
}

/** One row of events_append: see migrations/0013_event-store-append-function.sql (and 0024, its set-based path). */
interface AppendRow {
  out_entry: number;
  out_outcome: 'appended' | 'duplicate' | 'conflict' | 'wrong_revision';
  out_revision: string | null;
  out_position: string | null;
  out_conflicting: string[] | null;
}

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

const SELECT_EVENT = 'select position, event_id, stream_id, revision, type, data, metadata from events';

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: BigInt(row.revision),
    position: BigInt(row.position),
    type: row.type,
    data: row.data,
    metadata: row.metadata,
  };
}

/**
 * The PostgreSQL event store (the embedded default). Appends take a per-stream advisory lock
 * before the transaction writes anything, so a transaction id is assigned only after the lock:
 * per-stream revision order and global position order then always agree.
 */
export class PostgresEventStore implements EventStore {
  private readonly listener: NotificationListener;
  private readonly committer: GroupCommitter<StreamAppend[], AppendResult[]>;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: { pollIntervalMs: number; groupCommit?: { maxInFlight: number } },
  ) {
    this.listener = new NotificationListener(pool, CHANNEL);
    this.committer = new GroupCommitter({
      write: (members) => this.writeGroup(members),
      maxInFlight: options.groupCommit?.maxInFlight ?? GROUP_COMMIT_IN_FLIGHT,
      maxWeight: MAX_EVENTS_PER_APPEND,
      weigh: (appends) => appends.reduce((sum, a) => sum + a.events.length, 0),
    });
  }

  async append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision = 'any'): Promise<AppendResult> {
    const [result] = await this.appendMulti([{ streamId, events, expectedRevision }]);
    return result!;
  }

  async appendMulti(appends: StreamAppend[]): Promise<AppendResult[]> {
    const total = appends.reduce((sum, a) => sum + a.events.length, 0);
    if (total > MAX_EVENTS_PER_APPEND) throw new RangeError(`At most ${MAX_EVENTS_PER_APPEND} events per append`);
    if (new Set(appends.map((a) => a.streamId)).size !== appends.length) {
      throw new RangeError('Each stream may appear once in a multi-stream append');
    }
    return this.committer.submit(appends);
  }

  /** Writes a group of appends in one transaction; a failure of the whole call falls back to one call each. */
  private async writeGroup(members: StreamAppend[][]): Promise<(AppendResult[] | Error)[]> {
    try {
      return await this.callAppend(members);
    } catch (error) {
      if (members.length > 1) return Promise.all(members.map(async (member) => (await this.writeGroup([member]))[0]!));
      // A concurrent append of the very same event ids won the race: the retry answers the idempotent no-op.
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) return [asError(error)];
      return this.callAppend(members).catch((retryError: unknown) => [asError(retryError)]);
    }
  }

  /**
   * One events_append call (migration 0013; 0036 its statements): one round trip, one transaction for
   * every member. A named statement: its plan (a function scan) depends on no table, so it is made once
   * per connection instead of parsed and planned at every call.
   */
  private async callAppend(members: StreamAppend[][]): Promise<(AppendResult[] | Error)[]> {
    const entries = members.flatMap((appends, member) => appends.map((append) => ({ member, append })));
    const events = entries.flatMap(({ append }, entry) => append.events.map((event) => ({ entry: entry + 1, event })));
    const { rows } = await this.pool.query<AppendRow>({
      name: 'events_append',
      text: 'select * from events_append($1, $2, $3, $4, $5, $6, $7, $8)',
      values: [
        entries.map((e) => e.member),
        entries.map((e) => e.append.streamId),
        entries.map((e) => String(e.append.expectedRevision)),
        events.map((e) => e.entry),
        events.map((e) => e.event.id),
        events.map((e) => e.event.type),
        events.map((e) => JSON.stringify(e.event.data ?? null)),
        events.map((e) => JSON.stringify(e.event.metadata)),
      ],
    });
    if (rows.some((row) => row.out_outcome === 'appended' && row.out_position !== '0')) {
      this.listener.announce();
      this.listener.notifyEveryInstance();
    }
    const byEntry = new Map(rows.map((row) => [row.out_entry - 1, row]));
    let first = 0;
    return members.map((appends) => {
      const own = appends.map((append, i) => ({ append, row: byEntry.get(first + i) }));
      first += appends.length;
      const conflict = own.find(({ row }) => row?.out_outcome === 'conflict');
      if (conflict) return new IdempotencyConflictError(conflict.row!.out_conflicting!);
      const wrong = own.find(({ row }) => row?.out_outcome === 'wrong_revision');
      if (wrong) {
        const head = BigInt(wrong.row!.out_revision!);
        return new WrongExpectedVersionError(wrong.append.streamId, String(wrong.append.expectedRevision), head < 0n ? 'no_stream' : head);
      }
      return own.map(({ row }) => ({ nextExpectedRevision: BigInt(row!.out_revision!), position: BigInt(row!.out_position!) }));
    });
  }

  async readStream(streamId: string, fromRevision = 0n): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>(
      `${SELECT_EVENT} where stream_id = $1 and revision >= $2 order by revision`,
      [streamId, fromRevision.toString()],
    );
    return rows.map(toRecorded);
  }

  /**
   * One query for all the streams, instead of one round trip each; a tail starts at its revision (an
   * index range each, in `events_read_streams`: migration 0035, planned once per connection).
   */
  async readStreams(streamIds: string[], fromRevisions?: readonly bigint[]): Promise<RecordedEvent[][]> {
    const { rows } = fromRevisions
      ? await this.pool.query<EventRow>({ name: 'events_read_streams', text: 'select * from events_read_streams($1, $2)', values: [streamIds, fromRevisions.map(String)] })
      : await this.pool.query<EventRow>(`${SELECT_EVENT} where stream_id = any($1::text[]) order by stream_id, revision`, [streamIds]);
    const byStream = new Map<string, RecordedEvent[]>(streamIds.map((streamId) => [streamId, []]));
    for (const row of rows) byStream.get(row.stream_id)!.push(toRecorded(row));
    return streamIds.map((streamId) => byStream.get(streamId)!);
  }

  async readAll(afterPosition: bigint | undefined, limit: number): Promise<RecordedEvent[]> {
    // In index order whatever the table's statistics (migration 0025).
    const { rows } = await this.pool.query<EventRow>('select * from events_read_all($1, $2)', [(afterPosition ?? 0n).toString(), limit]);
    return rows.map(toRecorded);
  }

  /**
   * Served by the (tenant, position) index of migration 0017: a page walks the tenant's own events
   * only, whatever other tenants wrote. Same visibility bound as readAll.
   */
  async readTenantEvents(query: TenantEventsQuery, limit: number): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>(
      `${SELECT_EVENT}
        where metadata->>'tenantId' = $1 and position > $2 and position < events_visible_bound()
          and ($3::text[] is null or type = any($3))
          and ($4::text is null or starts_with(stream_id, $4))
          and ($5::timestamptz is null or (metadata->>'occurredAt')::timestamptz >= $5)
          and ($6::timestamptz is null or (metadata->>'occurredAt')::timestamptz <= $6)
        order by metadata->>'tenantId', position limit $7`,
      [
        query.tenantId,
        (query.after ?? 0n).toString(),
        query.types ?? null,
        query.streamPrefix ?? null,
        query.from?.toISOString() ?? null,
        query.to?.toISOString() ?? null,
        limit,
      ],
    );
    return rows.map(toRecorded);
  }

  async tenantAt(position: bigint): Promise<string | null> {
    const { rows } = await this.pool.query<{ tenant: string }>(
      `select metadata->>'tenantId' as tenant from events where position = $1 and position < events_visible_bound()`,
      [position.toString()],
    );
    return rows[0]?.tenant ?? null;
  }

  /**
   * A subscription's page and, in the same snapshot, whether committed events lie beyond what
   * readers may see yet (an older appender still runs): one statement where a page, the empty
   * read after it and a separate check took three. `events_read_tail` (migration 0035) plans its
   * statements once per connection, and the call is a named statement, so neither is planned per read.
   */
  private async readTail(afterPosition: bigint | undefined, limit: number): Promise<TailPage> {
    const after = afterPosition ?? 0n;
    const { rows } = await this.pool.query<Partial<EventRow> & { last_position: string | null }>({
      name: 'events_read_tail',
      text: 'select * from events_read_tail($1, $2)',
      values: [after.toString(), limit],
    });
    const events = rows[0]?.event_id ? rows.map((row) => toRecorded(row as EventRow)) : [];
    const last = rows[0]?.last_position;
    return { events, invisibleTail: last != null && BigInt(last) > (events.at(-1)?.position ?? after) };
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    return new PollingSubscription({
      ...options,
      read: (after, limit) => this.readTail(after, limit),
      newsMarker: () => this.listener.current,
      waitForNews: (timeoutMs, since) => this.listener.wait(timeoutMs, since),
      pollIntervalMs: this.options.pollIntervalMs,
    });
  }

  async headPosition(): Promise<bigint> {
    const { rows } = await this.pool.query<{ position: string | null }>(
      'select max(position) as position from events where position < events_visible_bound()',
    );
    return BigInt(rows[0]?.position ?? 0);
  }

  async lastWrittenPosition(): Promise<bigint> {
    const { rows } = await this.pool.query<{ position: string | null }>('select max(position) as position from events');
    return BigInt(rows[0]?.position ?? 0);
  }

  async close(): Promise<void> {
    await this.listener.close();
  }
}


import type pg from 'pg';
import { withTransaction } from '../db/pool.ts';
import { IdempotencyConflictError } from './errors.ts';
import { checkExpectedRevision, MAX_EVENTS_PER_APPEND } from './expected-revision.ts';
import { NotificationListener } from './postgres-listener.ts';
import { PollingSubscription } from './polling-subscription.ts';
import type {
  AppendResult,
  EventStore,
  NewEvent,
  RecordedEvent,
  StreamAppend,
  SubscribeOptions,
  Subscription,
  ExpectedRevision,
} from './port.ts';

const CHANNEL = 'iam_events';
const UNIQUE_VIOLATION = '23505';

interface EventRow {
  position: string;
  event_id: string;
  stream_id: string;
  revision: string;
  type: string;
  data: unknown;
  metadata: RecordedEvent['metadata'];
}

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

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: { pollIntervalMs: number },
  ) {
    this.listener = new NotificationListener(pool, CHANNEL);
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
    try {
      return await this.appendOnce(appends);
    } catch (error) {
      // A concurrent append of the very same event ids won the race: answer as the idempotent no-op.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) return this.appendOnce(appends);
      throw error;
    }
  }

  private appendOnce(appends: StreamAppend[]): Promise<AppendResult[]> {
    return withTransaction(this.pool, async (client) => {
      const streamIds = appends.map((a) => a.streamId);
      for (const streamId of [...streamIds].sort()) {
        await client.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [streamId]);
      }
      const duplicate = await this.findAlreadyAppended(client, appends);
      if (duplicate) return duplicate;

      const { rows: heads } = await client.query<{ stream_id: string; revision: string }>(
        'select stream_id, max(revision) as revision from events where stream_id = any($1::text[]) group by stream_id',
        [streamIds],
      );
      const current = new Map(heads.map((row) => [row.stream_id, BigInt(row.revision)]));
      const rows: { id: string; streamId: string; revision: bigint; type: string; data: string; metadata: string }[] = [];
      for (const { streamId, events, expectedRevision } of appends) {
        const head = current.get(streamId) ?? -1n;
        checkExpectedRevision(streamId, expectedRevision, head);
        events.forEach((event, index) =>
          rows.push({
            id: event.id,
            streamId,
            revision: head + BigInt(index) + 1n,
            type: event.type,
            data: JSON.stringify(event.data ?? null),
            metadata: JSON.stringify(event.metadata),
          }),
        );
      }
      const inserted = rows.length === 0 ? [] : await this.insert(client, rows);
      if (inserted.length > 0) await client.query('select pg_notify($1, $2)', [CHANNEL, '']);
      return appends.map(({ streamId }) => {
        const last = inserted.filter((row) => row.stream_id === streamId).at(-1);
        return last
          ? { nextExpectedRevision: BigInt(last.revision), position: BigInt(last.position) }
          : { nextExpectedRevision: current.get(streamId) ?? -1n, position: 0n };
      });
    });
  }

  private async insert(
    client: pg.PoolClient,
    rows: { id: string; streamId: string; revision: bigint; type: string; data: string; metadata: string }[],
  ): Promise<{ position: string; stream_id: string; revision: string }[]> {
    const { rows: inserted } = await client.query<{ position: string; stream_id: string; revision: string }>(
      `insert into events (position, event_id, stream_id, revision, type, data, metadata)
       select (pg_current_xact_id()::text::bigint << 20) + e.ordinal, e.id, e.stream_id, e.revision, e.type, e.data, e.metadata
         from unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::jsonb[], $6::jsonb[])
              with ordinality as e(id, stream_id, revision, type, data, metadata, ordinal)
       returning position, stream_id, revision`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.streamId),
        rows.map((r) => r.revision.toString()),
        rows.map((r) => r.type),
        rows.map((r) => r.data),
        rows.map((r) => r.metadata),
      ],
    );
    return inserted.sort((a, b) => (BigInt(a.position) < BigInt(b.position) ? -1 : 1));
  }

  /** Re-appending already recorded event ids is a no-op that answers the original result. */
  private async findAlreadyAppended(client: pg.PoolClient, appends: StreamAppend[]): Promise<AppendResult[] | null> {
    const ids = appends.flatMap((a) => a.events.map((e) => e.id));
    if (ids.length === 0) return null;
    const { rows } = await client.query<EventRow>(`${SELECT_EVENT} where event_id = any($1::uuid[])`, [ids]);
    if (rows.length === 0) return null;
    const found = new Map(rows.map((row) => [row.event_id, row]));
    const sameStreams = appends.every((a) => a.events.every((e) => found.get(e.id)?.stream_id === a.streamId));
    if (rows.length !== ids.length || !sameStreams) throw new IdempotencyConflictError(ids.filter((id) => found.has(id)));
    return appends.map((a) => {
      const last = found.get(a.events.at(-1)?.id ?? '');
      return last
        ? { nextExpectedRevision: BigInt(last.revision), position: BigInt(last.position) }
        : { nextExpectedRevision: -1n, position: 0n };
    });
  }

  async readStream(streamId: string, fromRevision = 0n): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>(
      `${SELECT_EVENT} where stream_id = $1 and revision >= $2 order by revision`,
      [streamId, fromRevision.toString()],
    );
    return rows.map(toRecorded);
  }

  async readAll(afterPosition: bigint | undefined, limit: number): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>(
      `${SELECT_EVENT} where position > $1 and position < events_visible_bound() order by position limit $2`,
      [(afterPosition ?? 0n).toString(), limit],
    );
    return rows.map(toRecorded);
  }

  /** True when committed events exist beyond what readers may see yet (an older transaction is running). */
  private async hasInvisibleTail(afterPosition: bigint): Promise<boolean> {
    const { rows } = await this.pool.query<{ pending: boolean }>(
      'select exists (select 1 from events where position > $1) as pending',
      [afterPosition.toString()],
    );
    return rows[0]?.pending ?? false;
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    return new PollingSubscription({
      ...options,
      read: (after, limit) => this.readAll(after, limit),
      hasInvisibleTail: (after) => this.hasInvisibleTail(after),
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

  async close(): Promise<void> {
    await this.listener.close();
  }
}


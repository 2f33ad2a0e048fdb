import {
  ANY,
  BACKWARDS,
  convertToCommandError,
  END,
  excludeSystemEvents,
  FORWARDS,
  KurrentDBClient,
  NO_STREAM,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError as KurrentWrongExpectedVersionError,
  type AppendStreamState,
  type CurrentStreamState,
  type Direction,
  type ReadPosition,
} from '@kurrent/kurrentdb-client';
import { WrongExpectedVersionError } from './errors.ts';
import { commitPositionOf, isUserEvent, readPositionAt, toEventData, toRecorded } from './kurrentdb-mapping.ts';
import { KurrentSubscription } from './kurrentdb-subscription.ts';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  RecordedEvent,
  StreamAppend,
  SubscribeOptions,
  Subscription,
  TenantEventsQuery,
} from './port.ts';
import { matchesTenantQuery } from './tenant-events.ts';

/** Events of $all read per step while looking for one tenant's. */
const TENANT_SCAN_PAGE = 1000;

/** Page size of the backward search for the newest event outside system streams. */
const HEAD_SEARCH_PAGE = 32;

const STREAM_STATES = { any: ANY, no_stream: NO_STREAM, stream_exists: STREAM_EXISTS } as const;

function toStreamState(expected: ExpectedRevision): AppendStreamState {
  return typeof expected === 'bigint' ? expected : STREAM_STATES[expected];
}

/** KurrentDB reports deleted and tombstoned streams with negative revisions too. */
function toActualRevision(state: CurrentStreamState): bigint | 'no_stream' {
  return typeof state === 'bigint' && state >= 0n ? state : 'no_stream';
}

/** The client's revision conflict as ours, naming the stream it concerns; other errors unchanged. */
function toPortError(error: unknown, appends: readonly StreamAppend[]): unknown {
  const converted = error instanceof Error ? convertToCommandError(error) : error;
  if (!(converted instanceof KurrentWrongExpectedVersionError)) return converted;
  const actual = toActualRevision(converted.actualState);
  const conflicting = appends.find((a) => a.streamId === converted.streamName);
  if (conflicting) return new WrongExpectedVersionError(conflicting.streamId, String(conflicting.expectedRevision), actual);
  // The server may refuse a multi-stream append without naming one of its streams.
  const streamIds = appends.map((a) => a.streamId).join(', ');
  const expected = appends.map((a) => String(a.expectedRevision)).join(', ');
  return new WrongExpectedVersionError(streamIds, expected, actual);
}

/** Unlike the PostgreSQL store, an append here must write something to have its revision checked. */
function requireEvents(streamId: string, events: readonly NewEvent[]): void {
  if (events.length === 0) throw new RangeError(`Nothing to append to ${streamId}: KurrentDB checks a revision only while writing`);
}

/**
 * The KurrentDB event store. Our event ids are KurrentDB event ids: re-appending recorded ids with
 * the same expected revision (or 'no_stream') is a server-side no-op that answers the original
 * revision and position. With 'any' or 'stream_exists' the server deduplicates only from a bounded
 * cache of recent ids; a partly recorded re-append is refused as a revision conflict. Positions are
 * commit positions in $all; reading $all needs a user allowed to (by default, an admin).
 */
export class KurrentEventStore implements EventStore {
  private constructor(private readonly client: KurrentDBClient) {}

  static async connect(connectionString: string): Promise<KurrentEventStore> {
    const store = new KurrentEventStore(KurrentDBClient.connectionString(connectionString));
    try {
      await store.headPosition(); // fails fast on a wrong address or a user without access to $all
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  async append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision = 'any'): Promise<AppendResult> {
    requireEvents(streamId, events);
    const result = await this.client
      .appendToStream(streamId, events.map(toEventData), { streamState: toStreamState(expectedRevision) })
      .catch((error: unknown) => {
        throw toPortError(error, [{ streamId, expectedRevision, events }]);
      });
    // Only when the connection string turns throwOnAppendFailure off.
    if (!result.success) {
      throw new WrongExpectedVersionError(streamId, String(expectedRevision), toActualRevision(result.nextExpectedRevision));
    }
    // Fresh and idempotent appends both answer the position of the stream's last event (read back
    // if the server leaves it out).
    const position = result.position?.commit ?? (await this.positionAt(streamId, result.nextExpectedRevision));
    return { nextExpectedRevision: result.nextExpectedRevision, position };
  }

  /**
   * Atomic across streams through multiStreamAppend, which needs KurrentDB 25.1 or newer (older
   * servers answer UnsupportedError). A single stream goes through appendToStream, which any
   * server supports.
   */
  async appendMulti(appends: StreamAppend[]): Promise<AppendResult[]> {
    if (new Set(appends.map((a) => a.streamId)).size !== appends.length) {
      throw new RangeError('Each stream may appear once in a multi-stream append');
    }
    const [only, ...others] = appends;
    if (!only) return [];
    if (others.length === 0) return [await this.append(only.streamId, only.events, only.expectedRevision)];
    for (const { streamId, events } of appends) requireEvents(streamId, events);

    const { responses } = await this.client
      .multiStreamAppend(
        appends.map((a) => ({
          streamName: a.streamId,
          expectedState: toStreamState(a.expectedRevision),
          events: a.events.map(toEventData),
        })),
      )
      .catch((error: unknown) => {
        throw toPortError(error, appends);
      });
    const revisions = new Map(responses.map((r) => [r.streamName, r.revision]));
    // The server answers one position for the whole transaction; each stream's is its last event's.
    return Promise.all(
      appends.map(async ({ streamId }) => {
        const revision = revisions.get(streamId);
        if (revision === undefined) throw new Error(`KurrentDB did not report the revision of ${streamId}`);
        return { nextExpectedRevision: revision, position: await this.positionAt(streamId, revision) };
      }),
    );
  }

  private async positionAt(streamId: string, revision: bigint): Promise<bigint> {
    for await (const { event } of this.client.readStream(streamId, { fromRevision: revision, maxCount: 1 })) {
      if (event) return commitPositionOf(event);
    }
    throw new Error(`Event ${revision} of ${streamId} is missing right after its append`);
  }

  readStreams(streamIds: string[], fromRevisions?: readonly bigint[]): Promise<RecordedEvent[][]> {
    return Promise.all(streamIds.map((streamId, i) => this.readStream(streamId, fromRevisions?.[i])));
  }

  async readStream(streamId: string, fromRevision = 0n): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      for await (const { event } of this.client.readStream(streamId, { fromRevision })) {
        if (event) events.push(toRecorded(event));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  async readAll(afterPosition: bigint | undefined, limit: number): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    let after = afterPosition;
    while (events.length < limit) {
      const wanted = limit - events.length;
      // A read may include its start position: one more is read to step over the event at `after`.
      const page = (await this.readAllPage(readPositionAt(after), FORWARDS, wanted + 1)).filter(
        (event) => after === undefined || event.position > after,
      );
      events.push(...page.filter(isUserEvent).slice(0, wanted));
      const last = page.at(-1);
      if (!last || page.length < wanted) break; // the end of the log
      after = last.position;
    }
    return events;
  }

  /** KurrentDB filters by event type or stream name, not by metadata: pages of $all are filtered here. */
  async readTenantEvents(query: TenantEventsQuery, limit: number): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    for (let after = query.after; events.length < limit; ) {
      const page = await this.readAll(after, TENANT_SCAN_PAGE);
      events.push(...page.filter((event) => matchesTenantQuery(event, query)).slice(0, limit - events.length));
      if (page.length < TENANT_SCAN_PAGE) break;
      after = page.at(-1)!.position;
    }
    return events;
  }

  async tenantAt(position: bigint): Promise<string | null> {
    const [event] = await this.readAllPage(readPositionAt(position), FORWARDS, 1);
    return event?.position === position && isUserEvent(event) ? event.metadata.tenantId : null;
  }

  async headPosition(): Promise<bigint> {
    let from: ReadPosition = END;
    for (;;) {
      const page = await this.readAllPage(from, BACKWARDS, HEAD_SEARCH_PAGE);
      const newest = page.find(isUserEvent);
      if (newest) return newest.position;
      const oldest = page.at(-1);
      if (!oldest || page.length < HEAD_SEARCH_PAGE) return 0n;
      from = readPositionAt(oldest.position);
    }
  }

  /**
   * One bounded page of $all without system event types, filtered by the server. System streams
   * are left to the caller: a server filter matches event types or stream names, not both. Pages
   * are read to their end because the client cannot cancel a read that is left early.
   */
  private async readAllPage(fromPosition: ReadPosition, direction: Direction, maxCount: number): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    for await (const { event } of this.client.readAll({ fromPosition, direction, maxCount, filter: excludeSystemEvents() })) {
      if (event) events.push(toRecorded(event));
    }
    return events;
  }

  /** KurrentDB shows a committed event to every reader at once. */
  lastWrittenPosition(): Promise<bigint> {
    return this.headPosition();
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    return new KurrentSubscription(this.client, options);
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}

/**
 * The EventStore port. Every mutation of the service is an append here; every read model is a
 * projection of `readAll` / `subscribeToAll`. Adapters: PostgreSQL (default) and KurrentDB.
 */

/** Metadata carried by every event; the audit log is built from it. */
export interface EventMetadata {
  tenantId: string;
  actor: string; // user id, client id or 'system'
  clientIp?: string | null;
  userAgent?: string | null;
  correlationId?: string | null;
  causationId?: string | null;
  occurredAt: string; // ISO 8601, from the injected clock
  /** The version of the event type's schema the data was written in (absent: 1); reads upcast it. */
  schemaVersion?: number;
  /**
   * The data subject whose key encrypted the event's personal fields and its clientIp/userAgent
   * (src/platform/events/personal-data.ts). Absent: they are in clear (written before encryption,
   * or naming nobody with a key).
   */
  personalDataKey?: string;
}

/** An event as a command handler proposes it. `id` makes re-appends idempotent. */
export interface NewEvent<Type extends string = string, Data = unknown> {
  id: string; // UUIDv7
  type: Type;
  data: Data;
  metadata: EventMetadata;
}

/** An event as the store recorded it. */
export interface RecordedEvent<Type extends string = string, Data = unknown> extends NewEvent<Type, Data> {
  streamId: string;
  /** 0-based revision of the event inside its stream. */
  revision: bigint;
  /** Position in the global log; strictly increasing in delivery order. */
  position: bigint;
}

/** Optimistic-concurrency expectation of an append. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

export interface AppendResult {
  /** Revision of the last event now in the stream (-1n for a stream left empty). */
  nextExpectedRevision: bigint;
  /** Global position of the last event appended (or of the already-recorded duplicate). */
  position: bigint;
}

export interface StreamAppend {
  streamId: string;
  expectedRevision: ExpectedRevision;
  events: NewEvent[];
}

export interface Subscription {
  /** Stops delivery; resolves once the handler is no longer running. */
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** Deliver events strictly after this position (undefined: from the beginning). */
  after?: bigint;
  /** Called for each batch in position order; the next batch waits for it to resolve. */
  onEvents(events: RecordedEvent[]): Promise<void>;
  onError?(error: unknown): void;
  batchSize?: number;
}

/** Which of one tenant's events a history read wants (compliance feeds); filters are optional and combine. */
export interface TenantEventsQuery {
  tenantId: string;
  /** Strictly after this position (undefined: from the start). */
  after?: bigint;
  /** Only these event types. */
  types?: readonly string[];
  /** Only streams whose id starts with this. */
  streamPrefix?: string;
  /** Bounds on `metadata.occurredAt`, both inclusive. */
  from?: Date;
  to?: Date;
}

export interface EventStore {
  append(streamId: string, events: NewEvent[], expectedRevision?: ExpectedRevision): Promise<AppendResult>;
  /** Appends to several streams in one transaction: all or nothing. Returns one result per stream. */
  appendMulti(appends: StreamAppend[]): Promise<AppendResult[]>;
  readStream(streamId: string, fromRevision?: bigint): Promise<RecordedEvent[]>;
  /**
   * Several streams at once (a batch command's many small aggregates, a login's account streams), in
   * the order asked; each from its revision in `fromRevisions` (the tail after a remembered state), else whole.
   */
  readStreams(streamIds: string[], fromRevisions?: readonly bigint[]): Promise<RecordedEvent[][]>;
  /** Events strictly after `afterPosition`, in position order, at most `limit`. */
  readAll(afterPosition: bigint | undefined, limit: number): Promise<RecordedEvent[]>;
  /**
   * One tenant's events matching `query`, in position order, at most `limit`, under the same
   * visibility rule as `readAll`: paging on the last position never skips nor repeats an event.
   */
  readTenantEvents(query: TenantEventsQuery, limit: number): Promise<RecordedEvent[]>;
  /** The tenant of the event at `position` (null when global readers see no event there). */
  tenantAt(position: bigint): Promise<string | null>;
  /** Catch-up from `after`, then live. */
  subscribeToAll(options: SubscribeOptions): Subscription;
  /**
   * Position of the newest event a global reader may see now (0n when empty). Never above an event
   * that can still appear, but not monotonic: PostgreSQL's visibility bound is conservative, and a
   * transaction that ends between a read's snapshot and its look at the commit log lowers it for
   * that read (migration 0039). Callers keep their own positions and use this as a starting point
   * or an upper bound only.
   */
  headPosition(): Promise<bigint>;
  /**
   * Position of the newest committed event, visible to global readers yet or not (0n when empty):
   * no append was ever acknowledged with a higher position.
   */
  lastWrittenPosition(): Promise<bigint>;
  close(): Promise<void>;
}

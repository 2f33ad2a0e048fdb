import { HistoryPages } from './history-pages.ts';
import type { EventStore, ExpectedRevision, NewEvent, RecordedEvent, StreamAppend, SubscribeOptions, Subscription, TenantEventsQuery } from './port.ts';

export interface SharedLogReaderOptions {
  /** Events the tail reads (and decodes) at a time; it reads on while some follower has fewer queued. */
  tailBatch: number;
  /** A follower with more than this queued is left behind: it reads history on its own until it rejoins. */
  queueLimit: number;
  /**
   * After a batch that reached the end of the log, the tail reads again no sooner than this many ms
   * after that batch: events appended meanwhile wait and come as one batch (0: read at once).
   */
  readIntervalMs: number;
}

const DEFAULTS: SharedLogReaderOptions = { tailBatch: 1000, queueLimit: 8000, readIntervalMs: 0 };
const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;

const lastOf = (events: RecordedEvent[]): bigint => events.at(-1)!.position;

/**
 * One reader of the global log per instance. `subscribeToAll` no longer opens a reader per
 * subscriber: a single tail (the inner store's own subscription, with its visibility rule)
 * reads and decodes each batch once and queues it to every follower that has joined it. Each
 * follower keeps its own position and hands batches to its handler one at a time, so it can lag
 * on its own; one that falls too far behind (or starts behind the tail) reads history through
 * `readAll` until it reaches the tail's position, then joins again; followers close behind each
 * other share those reads (history-pages.ts). Everything else is the inner store's.
 */
export class SharedLogReader implements EventStore {
  private tail: LogTail | null = null;

  private readonly options: SharedLogReaderOptions;

  constructor(
    private readonly inner: EventStore,
    options: Partial<SharedLogReaderOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    this.tail ??= new LogTail(this.inner, this.options);
    const tail = this.tail;
    return tail.follow(options, async () => {
      if (!tail.idle || this.tail !== tail) return;
      this.tail = null;
      await tail.close();
    });
  }

  append(streamId: string, events: NewEvent[], expectedRevision?: ExpectedRevision) {
    return this.inner.append(streamId, events, expectedRevision);
  }

  appendMulti(appends: StreamAppend[]) {
    return this.inner.appendMulti(appends);
  }

  readStream(streamId: string, fromRevision?: bigint) {
    return this.inner.readStream(streamId, fromRevision);
  }

  readStreams(streamIds: string[], fromRevisions?: readonly bigint[]) {
    return this.inner.readStreams(streamIds, fromRevisions);
  }

  readAll(afterPosition: bigint | undefined, limit: number) {
    return this.inner.readAll(afterPosition, limit);
  }

  readTenantEvents(query: TenantEventsQuery, limit: number) {
    return this.inner.readTenantEvents(query, limit);
  }

  tenantAt(position: bigint) {
    return this.inner.tenantAt(position);
  }

  headPosition() {
    return this.inner.headPosition();
  }

  lastWrittenPosition() {
    return this.inner.lastWrittenPosition();
  }

  async close(): Promise<void> {
    const tail = this.tail;
    this.tail = null;
    await tail?.close();
    await this.inner.close();
  }
}

/** Settles when `closing` does, or after `ms`. */
const pause = (ms: number, closing: Promise<void>): Promise<void> =>
  Promise.race([new Promise<void>((resolve) => setTimeout(resolve, ms).unref()), closing]);

/** The single subscription of an instance; starts at the head of the log, paced by its fastest follower. */
class LogTail {
  /** The last position read; every follower at or past it is joined and gets every later event. */
  position: bigint | null = null;
  readonly joined = new Set<Follower>();
  /** History read by followers behind the tail, shared (as much of it as one follower may queue). */
  readonly history: HistoryPages;
  private readonly followers = new Set<Follower>();
  private subscription: Subscription | null = null;
  private closed = false;
  private wakeOnDemand: (() => void) | null = null;
  private wakeOnClose: () => void = () => undefined;
  readonly closing = new Promise<void>((resolve) => (this.wakeOnClose = resolve));
  readonly started: Promise<void>;

  constructor(
    private readonly store: EventStore,
    readonly limits: SharedLogReaderOptions,
  ) {
    this.history = new HistoryPages((after, limit) => store.readAll(after, limit), Math.max(1, Math.floor(limits.queueLimit / limits.tailBatch)));
    this.started = this.start();
  }

  get idle(): boolean {
    return this.followers.size === 0;
  }

  follow(options: SubscribeOptions, onClosed: () => Promise<void>): Subscription {
    const follower = new Follower(this, options, async () => {
      this.followers.delete(follower);
      this.joined.delete(follower);
      this.demand();
      await onClosed();
    });
    this.followers.add(follower);
    return follower;
  }

  /** From the head as it is now: followers behind it catch up on their own. */
  private async start(): Promise<void> {
    for (let backoffMs = MIN_BACKOFF_MS; !this.closed; backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS)) {
      try {
        this.position = await this.store.headPosition();
        break;
      } catch {
        await pause(backoffMs, this.closing);
      }
    }
    if (this.closed) return;
    this.subscription = this.store.subscribeToAll({
      after: this.position!,
      batchSize: this.limits.tailBatch,
      onEvents: (events) => this.dispatch(events),
      onError: (error) => {
        for (const follower of this.joined) follower.failed(error);
      },
    });
  }

  /**
   * Queues the batch to every joined follower, then waits until one of them wants more; after a batch
   * shorter than a page (the log's end), also until `readIntervalMs` has passed since it came.
   */
  private async dispatch(events: RecordedEvent[]): Promise<void> {
    const came = performance.now();
    this.position = lastOf(events);
    for (const follower of [...this.joined]) follower.offer(events);
    while (!this.closed && !this.wanted()) {
      await Promise.race([new Promise<void>((resolve) => (this.wakeOnDemand = resolve)), this.closing]);
    }
    const { readIntervalMs, tailBatch } = this.limits;
    const left = came + readIntervalMs - performance.now();
    if (events.length < tailBatch && left > 0 && !this.closed) await pause(left, this.closing);
  }

  private wanted(): boolean {
    for (const follower of this.joined) if (follower.queued < this.limits.tailBatch) return true;
    return false;
  }

  /** A follower joined, drained its queue or left: the tail may read on. */
  demand(): void {
    if (!this.wakeOnDemand || !this.wanted()) return;
    const wake = this.wakeOnDemand;
    this.wakeOnDemand = null;
    wake();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeOnClose();
    await this.started;
    await this.subscription?.close();
  }
}

/** One subscriber: its own position, its own queue, its own handler loop. */
class Follower implements Subscription {
  private delivered: bigint;
  private queuedTo = 0n;
  private queue: RecordedEvent[] = [];
  private closed = false;
  private wake: (() => void) | null = null;
  private wakeOnClose: () => void = () => undefined;
  private readonly closing = new Promise<void>((resolve) => (this.wakeOnClose = resolve));
  private readonly done: Promise<void>;

  constructor(
    private readonly tail: LogTail,
    private readonly options: SubscribeOptions,
    private readonly onClosed: () => Promise<void>,
  ) {
    this.delivered = options.after ?? 0n;
    this.done = this.run();
  }

  get queued(): number {
    return this.queue.length;
  }

  private get batchSize(): number {
    return this.options.batchSize ?? 500;
  }

  /** From the tail: the events past what is already queued (or delivered, when the queue is empty). */
  offer(events: RecordedEvent[]): void {
    const fresh = events[0]!.position > this.queuedTo ? events : events.filter((event) => event.position > this.queuedTo);
    if (fresh.length === 0) return;
    if (this.queue.length + fresh.length > this.tail.limits.queueLimit) {
      // Left behind: drop the queue and read from what was delivered, on its own.
      this.tail.joined.delete(this);
      this.queue = [];
    } else {
      this.queue.push(...fresh);
      this.queuedTo = lastOf(fresh);
    }
    this.signal();
  }

  /** The tail failed to read: the handler hears of it as it would of its own subscription's failure. */
  failed(error: unknown): void {
    this.options.onError?.(error);
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async run(): Promise<void> {
    await Promise.race([this.tail.started, this.closing]);
    let backoffMs = MIN_BACKOFF_MS;
    while (!this.closed) {
      if (this.tail.joined.has(this)) {
        if (this.queue.length === 0) {
          await Promise.race([new Promise<void>((resolve) => (this.wake = resolve)), this.closing]);
          continue;
        }
        await this.deliver(this.queue.splice(0, this.batchSize));
        this.tail.demand();
        continue;
      }
      try {
        const events = await this.tail.history.after(this.delivered, this.batchSize, this.tail.limits.tailBatch);
        if (this.closed) break;
        if (events.length > 0) await this.deliver(events);
        backoffMs = MIN_BACKOFF_MS;
        if (this.delivered >= this.tail.position!) this.join();
        // Nothing visible yet below the tail's position (never expected: the tail saw it): look again.
        else if (events.length === 0) await pause(MIN_BACKOFF_MS, this.closing);
      } catch (error) {
        this.options.onError?.(error);
        await pause(backoffMs, this.closing);
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
      }
    }
  }

  /** Caught up with the tail: every later event the tail reads is queued here. */
  private join(): void {
    this.queue = [];
    this.queuedTo = this.delivered;
    this.tail.joined.add(this);
    this.tail.demand();
  }

  /** Hands the batch over; a failing handler gets the same batch again after a backoff, never a later one. */
  private async deliver(events: RecordedEvent[]): Promise<void> {
    for (let backoffMs = MIN_BACKOFF_MS; !this.closed; backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS)) {
      try {
        await this.options.onEvents(events);
        this.delivered = lastOf(events);
        return;
      } catch (error) {
        this.options.onError?.(error);
        await pause(backoffMs, this.closing);
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return this.done;
    this.closed = true;
    this.wakeOnClose();
    await this.done;
    await this.onClosed();
  }
}

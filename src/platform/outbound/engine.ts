import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { EventBus, PublicEvent, Subscription } from '../bus/port.ts';
import { PostgresInbox } from '../bus/postgres-inbox.ts';
import type { Clock } from '../clock.ts';
import type { Pool, PoolClient } from '../db/pool.ts';
import { GroupCommitter } from '../eventstore/group-commit.ts';
import { NotificationListener } from '../eventstore/postgres-listener.ts';
import type { HttpsClient, OutboundRequest, OutboundSend } from './https-client.ts';
import type { OutboundMetrics } from './metrics.ts';
import { OutboundQueue, type ClaimedDelivery, type DeliveredAttempt, type FailedAttempt, type NewDelivery } from './queue.ts';

/** An attempt's end, waiting for the group commit that records it. */
type SettledAttempt = { delivered: DeliveredAttempt } | { failed: FailedAttempt };

/**
 * Look-ups shared by one batch (the events of one bus batch, the deliveries of one claim): a target
 * read once per batch rather than once per event or delivery, or the data of all the batch's items
 * read in one query (`items` is the whole batch).
 */
export class BatchMemo<Item> {
  private readonly values = new Map<string, Promise<unknown>>();

  constructor(readonly items: readonly Item[]) {}

  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    let value = this.values.get(key) as Promise<T> | undefined;
    if (!value) {
      value = load();
      this.values.set(key, value);
    }
    return value;
  }
}

/** What a feature (webhooks, log streams) tells the engine; the engine knows nothing of its domain. */
export interface OutboundChannel {
  /** Names the consumer group (`<topic>.<name>`), the queue's rows and the metrics' label. */
  name: string;
  /**
   * The deliveries an event causes, one per target (none for most events), each with the type name
   * the receiver knows it by. Runs in the inbox transaction.
   */
  fanOut(event: PublicEvent, tx: PoolClient, memo: BatchMemo<PublicEvent>): Promise<Omit<NewDelivery, 'eventId'>[]>;
  /**
   * The request of one attempt (signed now), or an attempt the channel makes with a protocol client
   * of its own, or null when the target takes no deliveries any more.
   */
  prepare(delivery: ClaimedDelivery, memo: BatchMemo<ClaimedDelivery>): Promise<OutboundRequest | OutboundSend | null>;
  /** The wait before the attempt after failed attempt number `attempt`, or null when none is left (the delivery failed). */
  retryDelayMs(attempt: number): number | null;
  /**
   * Consecutive failed deliveries of one target (each with its retry schedule exhausted; a delivered
   * one resets the count) after which `onTargetFailing` is called.
   */
  failureThreshold: number;
  /**
   * Called after each failed delivery once the target's consecutive failed deliveries reach the
   * threshold. True when this call stopped the target (deactivated it): its waiting deliveries are
   * then dropped.
   */
  onTargetFailing(delivery: ClaimedDelivery, consecutiveFailures: number): Promise<boolean>;
}

export interface OutboundEngineOptions {
  channel: OutboundChannel;
  bus: EventBus;
  topic: string;
  pool: Pool;
  client: HttpsClient;
  clock: Clock;
  logger: Logger;
  metrics: OutboundMetrics;
  /** Bounds every attempt; the claim's lease outlasts it. */
  timeoutMs: number;
  /** Requests in flight at once in this instance. */
  concurrency?: number;
  /** How often idle workers look for retries that fell due (deliveries enqueued anywhere wake them at once). */
  pollMs?: number;
}

const LEASE_MARGIN_MS = 30_000;
const RECORD_GROUP_MAX = 500;
/**
 * While attempts are in flight, a claim waits until this share of the slots is free: a claim per
 * finished attempt would cost a statement (and the claim's target look-ups) for one or two rows.
 */
const CLAIM_WHEN_FREE_SHARE = 1 / 8;
/**
 * Attempts answered but not yet recorded, in multiples of `concurrency`: a request's slot is free as
 * soon as its answer is in (the record is group-committed meanwhile), but when the records fall
 * this far behind the claims wait for them.
 */
const UNRECORDED_PER_SLOT = 2;

/**
 * The delivery engine: a consumer group turns events into rows of a durable queue (in the inbox
 * transaction, so each event reaches each target once), and workers send due rows, record each
 * attempt and schedule the next. The consumer only enqueues, so a slow receiver never holds up the
 * bus; the queue lives in PostgreSQL, so retries survive restarts and several instances share it.
 */
export class OutboundEngine {
  readonly queue: OutboundQueue;
  /**
   * Wakes the workers: at once for this instance's news (wake), through LISTEN/NOTIFY for
   * deliveries another instance enqueued; its generation keeps news that came while the worker was
   * busy.
   */
  private readonly news: NotificationListener;
  private readonly stopping = new AbortController();
  /** Attempts not yet settled: sending, or answered and waiting for their record. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts whose request is in flight (the slots `concurrency` bounds). */
  private sending = 0;
  private subscription: Subscription | null = null;
  private working: Promise<void> | null = null;
  private readonly concurrency: number;
  /** Answers, for a failed attempt, its target's consecutive failed deliveries after the group. */
  private readonly recorder: GroupCommitter<SettledAttempt, number>;
  private readonly pollMs: number;

  constructor(private readonly options: OutboundEngineOptions) {
    this.queue = new OutboundQueue(options.pool, options.channel.name);
    this.concurrency = options.concurrency ?? 256;
    this.pollMs = options.pollMs ?? 500;
    this.news = new NotificationListener(options.pool, `outbound_${options.channel.name}`);
    // Every attempt in flight listens to it (up to `concurrency` at once).
    setMaxListeners(0, this.stopping.signal);
    options.metrics.track(this.queue);
    this.recorder = new GroupCommitter({ write: (group) => this.record(group), maxInFlight: 1, maxWeight: RECORD_GROUP_MAX, weigh: () => 1 });
  }

  async start(): Promise<void> {
    const { channel, bus, topic, pool, clock } = this.options;
    // Per topic: members of one Kafka group must subscribe to the same topics.
    const groupId = `${topic}.${channel.name}`;
    const inbox = new PostgresInbox(pool);
    this.subscription = await bus.subscribe({
      groupId,
      topic,
      fromBeginning: false,
      // One transaction per batch: the inbox rows of its new events and their deliveries.
      handler: async (messages) => {
        let enqueued = 0;
        await inbox.runOnceEach(groupId, messages.map((message) => message.value.id), async (fresh, tx) => {
          const deliveries: NewDelivery[] = [];
          const fannedOut = new Set<string>();
          const memo = new BatchMemo(messages.filter((message) => fresh.has(message.value.id)).map((message) => message.value));
          for (const { value: event } of messages) {
            // A redelivered batch may hold an event twice; it fans out once.
            if (!fresh.has(event.id) || fannedOut.has(event.id)) continue;
            fannedOut.add(event.id);
            for (const delivery of await channel.fanOut(event, tx, memo)) deliveries.push({ ...delivery, eventId: event.id });
          }
          enqueued = (await this.queue.enqueue(tx, deliveries, clock.now())).length;
        });
        // This instance's workers at once, the other instances' through PostgreSQL; a batch that
        // enqueued nothing (no subscriber wants its events) wakes nobody and costs no claim.
        if (enqueued > 0) {
          this.wake();
          this.news.notifyEveryInstance();
        }
      },
    });
    this.working = this.work();
  }

  /** Deliveries were enqueued outside the consumer (a test event, a manual retry): look now. */
  wake(): void {
    this.news.announce();
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    this.stopping.abort();
    await this.news.close();
    await this.working;
  }

  private async work(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      const since = this.news.current;
      const free = Math.min(this.concurrency - this.sending, this.concurrency * (1 + UNRECORDED_PER_SLOT) - this.inFlight.size);
      let claimed: ClaimedDelivery[] = [];
      if (free > 0 && (this.sending === 0 || free >= this.concurrency * CLAIM_WHEN_FREE_SHARE)) {
        claimed = await this.queue.claimDue(this.options.clock.now(), free, this.options.timeoutMs + LEASE_MARGIN_MS).catch((error: unknown) => {
          this.options.logger.error({ err: error, channel: this.options.channel.name }, 'claiming due deliveries failed');
          return [];
        });
      }
      const memo = new BatchMemo(claimed);
      this.sending += claimed.length;
      for (const delivery of claimed) {
        let slotFreed = false;
        const freeSlot = () => {
          if (slotFreed) return;
          slotFreed = true;
          this.sending -= 1;
          this.wake();
        };
        const attempt = this.attempt(delivery, memo, freeSlot).finally(() => {
          freeSlot();
          this.inFlight.delete(attempt);
          this.wake();
        });
        this.inFlight.add(attempt);
      }
      // A full batch may have more behind it; otherwise wait for news or the next poll.
      if (claimed.length === 0 || claimed.length < free) await this.news.wait(this.pollMs, since);
    }
    await Promise.all([...this.inFlight]);
  }

  /**
   * Records the attempts that ended while the previous group was written: two statements (the
   * delivered, then the failed), one group at a time, so no two writes of this instance contend for
   * the targets' rows.
   */
  private async record(group: SettledAttempt[]): Promise<number[]> {
    const delivered = group.flatMap((settled) => ('delivered' in settled ? [settled.delivered] : []));
    const failed = group.flatMap((settled) => ('failed' in settled ? [settled.failed] : []));
    // A target that recovered had its waiting retries made due: look for them now.
    if ((await this.queue.recordDelivered(delivered)) > 0) this.wake();
    const failedDeliveries = await this.queue.recordFailures(failed);
    return group.map((settled) => ('failed' in settled ? (failedDeliveries.get(settled.failed.delivery.targetId) ?? 0) : 0));
  }

  /** `answered` is called once the request is over (its slot is free), before the attempt is recorded. */
  private async attempt(delivery: ClaimedDelivery, memo: BatchMemo<ClaimedDelivery>, answered: () => void): Promise<void> {
    const { channel, client, clock, logger } = this.options;
    try {
      const request = await channel.prepare(delivery, memo);
      if (!request) {
        await this.queue.cancel(delivery, 'the target no longer takes deliveries');
        this.options.metrics.outcome(channel.name, 'cancelled');
        return;
      }
      const startedAt = clock.now();
      const result = 'send' in request ? await request.send(this.stopping.signal) : await client.post(request, this.stopping.signal);
      answered();
      if (this.stopping.signal.aborted && !result.ok) {
        // Interrupted by shutdown, not failed: the next start attempts it again.
        await this.queue.release(delivery);
        return;
      }
      if (result.ok) {
        await this.recorder.submit({ delivered: { delivery, result, startedAt } });
        this.options.metrics.outcome(channel.name, 'delivered');
        return;
      }
      const delayMs = channel.retryDelayMs(delivery.attempt);
      const retryAt = delayMs === null ? null : new Date(clock.now().getTime() + delayMs);
      const failedDeliveries = await this.recorder.submit({ failed: { delivery, result, startedAt, retryAt } });
      this.options.metrics.outcome(channel.name, retryAt ? 'retrying' : 'failed');
      if (retryAt === null && failedDeliveries >= channel.failureThreshold && (await channel.onTargetFailing(delivery, failedDeliveries))) {
        const dropped = await this.queue.cancelWaiting(delivery.targetId, 'the target was stopped after consecutive failed deliveries');
        this.options.metrics.outcome(channel.name, 'cancelled', dropped);
      }
    } catch (error) {
      // The claim's lease runs out and the delivery is attempted again.
      logger.error({ err: error, channel: channel.name, deliveryId: delivery.id }, 'delivery attempt could not be recorded');
    }
  }
}

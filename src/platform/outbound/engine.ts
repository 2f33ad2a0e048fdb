import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { EventBus, PublicEvent, Subscription } from '../bus/port.ts';
import { PostgresInbox } from '../bus/postgres-inbox.ts';
import type { Clock } from '../clock.ts';
import type { Pool } from '../db/pool.ts';
import { GroupCommitter } from '../eventstore/group-commit.ts';
import { NotificationListener } from '../eventstore/postgres-listener.ts';
import type { AttemptResult, HttpsClient, OutboundRequest, OutboundSend } from './https-client.ts';
import type { OutboundMetrics } from './metrics.ts';
import { CountsAdded, OutboundQueue, type ClaimedDelivery, type DeliveredAttempt, type FailedAttempt, type NewDelivery } from './queue.ts';

/** An attempt's end, waiting for the group commit that records it. */
type SettledAttempt = { delivered: DeliveredAttempt } | { failed: FailedAttempt };

/** An event's deliveries as its channel fanned them out, made into ClaimedDelivery objects when their chunk sends. */
type FannedOut = { eventId: string; deliveries: Omit<NewDelivery, 'eventId'>[] };

/** A request made and answered (or failed), or null when the target takes no deliveries any more. */
type Sent = { result: AttemptResult; startedAt: Date } | null;

/**
 * Look-ups shared by one batch (the events of one bus batch, the deliveries of one claim or of the
 * consumer's own attempts): a target read once per batch rather than once per event or delivery,
 * or the data of all the batch's items read in one query (`items` is the whole batch).
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
   * the receiver knows it by. Runs before the batch's inbox transaction; `memo` holds the batch's
   * events (work shared by them is done once).
   */
  fanOut(event: PublicEvent, memo: BatchMemo<PublicEvent>): Promise<Omit<NewDelivery, 'eventId'>[]>;
  /** The event types `fanOut` can make deliveries of: the bus passes the others over undecoded (most events of a busy service). */
  takes(eventType: string): boolean;
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
  /**
   * How long the consumer waits for the answers of the attempts it makes itself before it hands the
   * unanswered ones to the queue (as leased rows) and commits the batch.
   */
  consumerWaitMs?: number;
  /**
   * While a target's circuit is open (it failed an attempt and has not answered since), its new
   * deliveries wait without an attempt and one of them is sent this often as a probe.
   */
  probeIntervalMs?: number;
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
const TROUBLED_TARGETS_KEPT = 10_000;
/** A chunk's deliveries the consumer attempts itself at most (the rest are enqueued): memory and timers stay bounded. */
const CONSUMER_ATTEMPTS_MAX = 5_000;
/**
 * The deliveries of a bus batch are attempted and committed in chunks of about this many (whole
 * events), so the answers of one chunk and its commit overlap the sending of the next.
 */
const CHUNK_DELIVERIES = 500;
/** Chunks of one batch sending at once: the next one starts when the one this many places before it has its answers. */
const CHUNKS_SENDING = 2;

/**
 * The delivery engine: a consumer group turns events into deliveries and makes their first attempt
 * itself, then workers send due rows of a durable queue, record each attempt and schedule the next.
 * The consumer sends a batch's deliveries at once and waits for the answers, bounded
 * (`consumerWaitMs`); then one transaction records the batch's events in the inbox (so each event
 * reaches each target once), the delivered ones with their attempt, and the rest (failed, still
 * unanswered) as queue rows, so the bus offset moves only once every delivery is recorded or queued:
 * a crash before that commit sends the batch again (at least once, same event id). A target with a
 * consumer attempt that failed, or that answered none by the end of the wait, is not attempted by the
 * consumer again until one of its deliveries gets through: its deliveries are only enqueued, so a
 * slow or dead receiver holds the consumer up once, not at every batch.
 * The queue lives in PostgreSQL, so retries survive restarts and several instances share it.
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
  private readonly consumerWaitMs: number;
  /**
   * Targets the consumer only enqueues for: one of its attempts failed, or none was answered by the
   * end of its wait. A delivered attempt of the target (in this instance) takes it off the list.
   */
  private readonly troubledTargets = new Set<string>();

  constructor(private readonly options: OutboundEngineOptions) {
    this.queue = new OutboundQueue(options.pool, options.channel.name, options.probeIntervalMs ?? 5_000);
    this.concurrency = options.concurrency ?? 256;
    this.pollMs = options.pollMs ?? 500;
    this.consumerWaitMs = options.consumerWaitMs ?? 5_000;
    this.news = new NotificationListener(options.pool, `outbound_${options.channel.name}`);
    // Every attempt in flight listens to it (up to `concurrency` at once).
    setMaxListeners(0, this.stopping.signal);
    options.metrics.track(this.queue);
    this.recorder = new GroupCommitter({ write: (group) => this.record(group), maxInFlight: 1, maxWeight: RECORD_GROUP_MAX, weigh: () => 1 });
  }

  async start(): Promise<void> {
    const { channel, bus, topic } = this.options;
    // Per topic: members of one Kafka group must subscribe to the same topics.
    const groupId = `${topic}.${channel.name}`;
    const inbox = new PostgresInbox(this.options.pool);
    this.subscription = await bus.subscribe({
      groupId,
      topic,
      fromBeginning: false,
      handler: (messages) => this.consume(groupId, inbox, messages),
      takes: (eventType) => channel.takes(eventType),
    });
    this.working = this.work();
  }

  /**
   * One bus batch: its events fanned out, then the deliveries of those not applied yet in chunks of
   * about CHUNK_DELIVERIES (whole events each), each attempted at once and recorded in a transaction of
   * its own. Chunks overlap: a chunk starts sending once the chunk CHUNKS_SENDING places before it
   * has its answers, so a chunk's last answers and its commit come in while later chunks send. The
   * handler resolves (and the bus moves the offset) only once every chunk committed; a chunk that
   * failed fails the batch once the others settled, and the redelivery skips the chunks committed
   * (their events are in the inbox).
   */
  private async consume(groupId: string, inbox: PostgresInbox, messages: readonly { value: PublicEvent }[]): Promise<void> {
    const { channel } = this.options;
    const events = [...new Map(messages.map((message) => [message.value.id, message.value])).values()];
    const eventMemo = new BatchMemo(events);
    const fannedOut = new Map<string, FannedOut>();
    for (const event of events) {
      const deliveries = await channel.fanOut(event, eventMemo);
      if (deliveries.length > 0) fannedOut.set(event.id, { eventId: event.id, deliveries });
    }
    // Events that cause no delivery need no inbox row: a redelivery fans them out again, to nothing.
    // So the inbox is asked only about events with deliveries (a batch without any costs no statement).
    if (fannedOut.size === 0) return;
    const unapplied = await inbox.unapplied(groupId, [...fannedOut.keys()]);
    const chunks: { events: FannedOut[]; deliveries: number }[] = [{ events: [], deliveries: 0 }];
    for (const [eventId, fanned] of fannedOut) {
      if (!unapplied.has(eventId)) continue;
      if (chunks.at(-1)!.deliveries >= CHUNK_DELIVERIES) chunks.push({ events: [], deliveries: 0 });
      chunks.at(-1)!.events.push(fanned);
      chunks.at(-1)!.deliveries += fanned.deliveries.length;
    }
    const answered: Promise<void>[] = [];
    const committed = chunks.map(({ events: chunkEvents }, index) => {
      const chunk = this.deliverChunk(groupId, inbox, chunkEvents, answered[index - CHUNKS_SENDING]);
      answered.push(chunk.answered);
      return chunk.committed;
    });
    const failure = (await Promise.allSettled(committed)).find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;
  }

  /**
   * One chunk of a bus batch: once `turn` resolves (an earlier chunk has its answers), its
   * deliveries are made (their ids computed) and attempted at once (the targets not troubled, as
   * they are then), and `answered` resolves when the answers are in or the wait is over;
   * `committed`, once one transaction wrote the inbox rows of its events and every delivery's row.
   * A chunk's deliveries are made only at its turn: made for the whole batch at its fan-out, those
   * of the later chunks lived through the earlier chunks' sending, long enough for the collector to
   * move them to the old generation.
   */
  private deliverChunk(
    groupId: string,
    inbox: PostgresInbox,
    events: FannedOut[],
    turn: Promise<void> | undefined,
  ): { answered: Promise<void>; committed: Promise<void> } {
    const made = (turn ?? Promise.resolve()).then(() => this.deliveriesOf(events));
    const answers = made.then((deliveries) => this.attemptChunk(deliveries));
    const answered = answers.then(
      () => undefined,
      () => undefined,
    );
    return { answered, committed: answers.then(async (attempts) => this.commitChunk(groupId, inbox, await made, attempts)) };
  }

  /** A chunk's deliveries, each with its id, for its first attempt. */
  private deliveriesOf(events: FannedOut[]): ClaimedDelivery[] {
    const deliveries: ClaimedDelivery[] = [];
    for (const { eventId, deliveries: fanned } of events) {
      // Each field named: node 20 builds `{ ...delivery, eventId }` in about 4.5 µs, against 0.2 for the
      // literal (a micro-benchmark): 6% of the consumer's CPU in the profile.
      for (const { tenantId, targetId, eventType, payload } of fanned) {
        deliveries.push({ tenantId, targetId, eventId, eventType, payload, id: this.queue.idOf(targetId, eventId), attempt: 1 });
      }
    }
    return deliveries;
  }

  /** The consumer's own attempts of a chunk's deliveries, and the answers that came within its wait. */
  private async attemptChunk(deliveries: ClaimedDelivery[]): Promise<{ sends: Map<string, Promise<Sent>>; answers: Map<string, NonNullable<Sent>> }> {
    const attempted = deliveries.filter((delivery) => !this.troubledTargets.has(delivery.targetId)).slice(0, CONSUMER_ATTEMPTS_MAX);
    const memo = new BatchMemo(attempted);
    const sends = new Map(attempted.map((delivery) => [delivery.id, this.send(delivery, memo)]));
    return { sends, answers: await this.answeredWithin(sends) };
  }

  /**
   * One transaction for a chunk: the inbox rows of its events, the delivered attempts as settled
   * rows, the failed or unanswered ones as rows leased to this instance (settled as their answers
   * come), the rest queued for the workers.
   */
  private async commitChunk(
    groupId: string,
    inbox: PostgresInbox,
    deliveries: ClaimedDelivery[],
    { sends, answers }: { sends: Map<string, Promise<Sent>>; answers: Map<string, NonNullable<Sent>> },
  ): Promise<void> {
    const { channel, clock } = this.options;
    // Events that cause no delivery need no inbox row: a redelivery fans them out again, to nothing.
    if (deliveries.length === 0) return;
    const delivered: DeliveredAttempt[] = [];
    const leased: ClaimedDelivery[] = [];
    const queued: ClaimedDelivery[] = [];
    // A target that answered some of its deliveries in time is busy, not slow (a chunk bigger than
    // the wait can send leaves every target with answers still to come).
    const answering = new Set(deliveries.filter((delivery) => answers.has(delivery.id)).map((delivery) => delivery.targetId));
    for (const delivery of deliveries) {
      const answer = answers.get(delivery.id);
      if (answer?.result.ok) delivered.push({ delivery, result: answer.result, startedAt: answer.startedAt });
      else if (sends.has(delivery.id)) {
        leased.push(delivery);
        if (answer || !answering.has(delivery.targetId)) this.trouble(delivery.targetId);
      } else queued.push(delivery);
    }
    const now = clock.now();
    let kept = { delivered: 0, leased: new Set<string>(), queued: 0 };
    await inbox.runOnceEach(groupId, [...new Set(deliveries.map((delivery) => delivery.eventId))], async (fresh, tx) => {
      // Events another member applied meanwhile are theirs (their attempts here were extra: at least once).
      const ours = <T extends { eventId: string }>(items: T[]) => items.filter((item) => fresh.has(item.eventId));
      // The targets' counts of the chunk's new rows, added in one statement before the commit.
      const counts = new CountsAdded();
      kept = {
        delivered: await this.queue.insertDelivered(tx, delivered.filter((attempt) => fresh.has(attempt.delivery.eventId)), counts),
        leased: new Set(await this.queue.enqueue(tx, ours(leased), now, { leasedUntil: new Date(now.getTime() + this.options.timeoutMs + LEASE_MARGIN_MS), counts })),
        queued: (await this.queue.enqueue(tx, ours(queued), now, { counts })).length,
      };
      await this.queue.addCounts(tx, counts);
    });
    this.options.metrics.outcome(channel.name, 'delivered', kept.delivered);
    // The leased rows are this instance's attempts: each is recorded as it settles, like a claimed one.
    for (const delivery of leased) {
      if (!kept.leased.has(delivery.id)) continue;
      this.sending += 1;
      const settled = sends
        .get(delivery.id)!
        .then((sent) => {
          this.sending -= 1;
          return this.settle(delivery, sent);
        })
        .finally(() => {
          this.inFlight.delete(settled);
          this.wake();
        });
      this.inFlight.add(settled);
    }
    if ((await this.queue.recover([...new Set(delivered.map((attempt) => attempt.delivery.targetId))])) > 0 || kept.queued > 0) {
      // This instance's workers at once, the other instances' through PostgreSQL.
      this.wake();
      this.news.notifyEveryInstance();
    }
  }

  private trouble(targetId: string): void {
    // Bounded: targets deleted while troubled would stay forever.
    if (this.troubledTargets.size >= TROUBLED_TARGETS_KEPT) this.troubledTargets.clear();
    this.troubledTargets.add(targetId);
  }

  /** The sends that settled within the consumer's wait (all of them, if they are quicker). */
  private async answeredWithin(sends: Map<string, Promise<Sent>>): Promise<Map<string, NonNullable<Sent>>> {
    const answers = new Map<string, NonNullable<Sent>>();
    if (sends.size === 0) return answers;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.consumerWaitMs)));
    const all = Promise.all(
      [...sends].map(([id, send]) =>
        send.then((sent) => {
          if (sent) answers.set(id, sent);
        }),
      ),
    );
    await Promise.race([all, waited]);
    clearTimeout(timer);
    // A snapshot: answers arriving from now on belong to the leased rows' settling.
    return new Map(answers);
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
    const sent = await this.send(delivery, memo);
    answered();
    await this.settle(delivery, sent);
  }

  /** One attempt's request, signed now; null when the target takes no deliveries any more. Never throws. */
  private async send(delivery: ClaimedDelivery, memo: BatchMemo<ClaimedDelivery>): Promise<Sent> {
    const { channel, client, clock } = this.options;
    const startedAt = clock.now();
    try {
      const request = await channel.prepare(delivery, memo);
      if (!request) return null;
      const result = 'send' in request ? await request.send(this.stopping.signal) : await client.post(request, this.stopping.signal);
      return { result, startedAt };
    } catch (error) {
      return { result: { ok: false, status: null, body: null, durationMs: 0, error: error instanceof Error ? error.message : String(error) }, startedAt };
    }
  }

  /** Records an attempt of a delivery whose row this instance holds (claimed, or born leased) and schedules what follows. */
  private async settle(delivery: ClaimedDelivery, sent: Sent): Promise<void> {
    const { channel, clock, logger } = this.options;
    try {
      if (!sent) {
        await this.queue.cancel(delivery, 'the target no longer takes deliveries');
        this.options.metrics.outcome(channel.name, 'cancelled');
        return;
      }
      const { result, startedAt } = sent;
      if (this.stopping.signal.aborted && !result.ok) {
        // Interrupted by shutdown, not failed: the next start attempts it again.
        await this.queue.release(delivery);
        return;
      }
      if (result.ok) {
        this.troubledTargets.delete(delivery.targetId);
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

import { EventEmitter, once } from 'node:events';
import type { Logger } from 'pino';
import { distinctGroups, passedOver } from './consumer-groups.ts';
import type { ConsumerGroup, DeliveredMessage, EventBus, OutgoingMessage, PublicEvent, SubscribeOptions, Subscription, TopicOptions } from './port.ts';
import { encodePublicEvent } from './public-event.ts';
import { waitBeforeRedelivery } from './redelivery.ts';

const MAX_BATCH = 500;

interface StoredMessage {
  key: string;
  headers: Record<string, string>;
  /** Stored encoded, as on a broker: every delivery parses a fresh copy and bad events fail at publish. */
  value: string;
}

/**
 * Messages a topic keeps once every subscribed group has committed them, for a group that joins
 * later from the beginning (Kafka's retention, by count). Without a bound the log would hold every
 * event of the process's life.
 */
export const IN_PROCESS_RETAINED_MESSAGES = 10_000;

/** One append-only, totally ordered log per topic (its partition count is ignored: one partition). */
class TopicLog {
  /** Offset of `messages[0]`: older messages were dropped by `retainFrom`. */
  private firstOffset = 0;
  private messages: StoredMessage[] = [];
  private readonly appended = new EventEmitter().setMaxListeners(0);

  /** The offset the next message will get. */
  get end(): number {
    return this.firstOffset + this.messages.length;
  }

  /** The oldest offset still held: where a group joining from the beginning starts. */
  get start(): number {
    return this.firstOffset;
  }

  append(messages: StoredMessage[]): void {
    this.messages.push(...messages);
    this.appended.emit('append');
  }

  read(from: number, limit: number): StoredMessage[] {
    const index = from - this.firstOffset;
    return this.messages.slice(index, index + limit);
  }

  /** Drops what lies before both `committedByAll` and the last retained messages, in chunks so dropping stays amortized O(1). */
  retainFrom(committedByAll: number): void {
    const droppable = Math.min(committedByAll, this.end - IN_PROCESS_RETAINED_MESSAGES) - this.firstOffset;
    if (droppable < 1_024) return;
    this.messages.splice(0, droppable);
    this.firstOffset += droppable;
  }

  /** Resolves once the log's end passes `offset`, or when `signal` aborts. */
  async waitForMoreThan(offset: number, signal: AbortSignal): Promise<void> {
    if (this.end > offset) return;
    await once(this.appended, 'append', { signal }).catch(() => undefined);
  }
}

interface Member {
  options: SubscribeOptions;
  /** Where this member starts when its group has committed nothing yet. */
  startOffset: number;
  signal: AbortSignal;
}

type DeliveryOutcome = 'delivered' | 'caught-up' | 'failed';

/**
 * The embedded EventBus (KAFKA_BROKERS unset), with the Kafka adapter's contract: committed offsets
 * per consumer group, commit only after the handler resolved, redelivery from the committed offset
 * after a backoff when it throws. Several members of one group take turns batch by batch; the group
 * lock keeps one batch in flight per group, so order holds. State lives as long as the process,
 * which is why a publish resolves only once the subscribed groups have committed it.
 */
export class InProcessEventBus implements EventBus {
  private readonly topics = new Map<string, TopicLog>();
  private readonly committedOffsets = new Map<string, number>();
  private readonly groupLocks = new Map<string, Promise<void>>();
  private readonly subscriptions = new Set<Subscription>();
  private readonly members = new Set<Member>();
  /** Emits 'progress' whenever a group commits or a member leaves. */
  private readonly progress = new EventEmitter().setMaxListeners(0);
  private readonly closing = new AbortController();

  constructor(private readonly logger: Logger) {}

  async ensureTopic(topic: string, _options: TopicOptions): Promise<void> {
    this.assertOpen();
    if (!this.topics.has(topic)) this.topics.set(topic, new TopicLog());
  }

  async publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    this.assertOpen();
    const log = this.topic(topic);
    // Encode the whole batch before appending any of it: all or nothing.
    log.append(messages.map(({ key, headers, value }) => ({ key, headers: { ...headers }, value: encodePublicEvent(value) })));
    await this.untilCommittedByEveryGroup(topic, log.end);
  }

  /**
   * Nothing here survives the process: a batch is durable only once every group consuming the topic
   * has committed it. A relay that advanced its checkpoint sooner would lose the batch in a crash.
   */
  private async untilCommittedByEveryGroup(topic: string, end: number): Promise<void> {
    const pending = () => [...this.members].some((member) => member.options.topic === topic && this.position(member) < end);
    while (pending()) {
      if (this.closing.signal.aborted) throw new Error('The event bus closed before every consumer group committed the batch');
      await once(this.progress, 'progress', { signal: this.closing.signal }).catch(() => undefined);
    }
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.assertOpen();
    const log = this.topic(options.topic);
    const stopping = new AbortController();
    const startOffset = options.fromBeginning ? log.start : log.end;
    const member: Member = { options, startOffset, signal: stopping.signal };
    this.members.add(member);
    const consuming = this.consume(member, log);
    const subscription: Subscription = {
      close: async () => {
        stopping.abort();
        await consuming;
        this.members.delete(member);
        this.subscriptions.delete(subscription);
        this.progress.emit('progress');
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  async consumerLag(groupId: string, topic: string): Promise<number> {
    this.assertOpen();
    const log = this.topic(topic);
    return log.end - (this.committedOffsets.get(groupKey(groupId, topic)) ?? log.start);
  }

  subscribedGroups(): ConsumerGroup[] {
    return distinctGroups(this.members);
  }

  async close(): Promise<void> {
    if (this.closing.signal.aborted) return;
    this.closing.abort();
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
  }

  private async consume(member: Member, log: TopicLog): Promise<void> {
    const { groupId, topic } = member.options;
    let failedAttempts = 0;
    while (!member.signal.aborted) {
      const attempt = failedAttempts + 1;
      const outcome = await this.withGroupLock(groupKey(groupId, topic), () => this.deliverNext(member, log, attempt));
      if (outcome === 'failed') {
        failedAttempts++;
        await waitBeforeRedelivery(failedAttempts, member.signal);
      } else {
        failedAttempts = 0;
        if (outcome === 'caught-up') await log.waitForMoreThan(this.position(member), member.signal);
      }
    }
  }

  /** Delivers the messages after the group's committed offset and commits them if the handler succeeds. */
  private async deliverNext(member: Member, log: TopicLog, attempt: number): Promise<DeliveryOutcome> {
    const { groupId, topic, handler } = member.options;
    // A group whose committed offset was dropped meanwhile resumes at the oldest kept (Kafka's "earliest").
    const from = Math.max(this.position(member), log.start);
    const batch = log.read(from, MAX_BATCH);
    if (batch.length === 0 || member.signal.aborted) return 'caught-up';
    try {
      const delivered: DeliveredMessage[] = [];
      batch.forEach((message, index) => {
        if (!passedOver(member.options, message.headers['event-type'])) delivered.push(toDeliveredMessage(topic, from + index, message));
      });
      if (delivered.length > 0) await handler(delivered);
    } catch (error) {
      const context = { err: error, groupId, topic, firstOffset: from, attempt };
      this.logger.warn(context, 'event handler failed; redelivering the batch');
      return 'failed';
    }
    this.committedOffsets.set(groupKey(groupId, topic), from + batch.length);
    log.retainFrom(this.committedByEveryMember(topic));
    this.progress.emit('progress');
    return 'delivered';
  }

  /** The lowest position of the topic's current members: below it, no subscribed group needs a message. */
  private committedByEveryMember(topic: string): number {
    let lowest = Number.POSITIVE_INFINITY;
    for (const member of this.members) if (member.options.topic === topic) lowest = Math.min(lowest, this.position(member));
    return lowest;
  }

  private position(member: Member): number {
    return this.committedOffsets.get(groupKey(member.options.groupId, member.options.topic)) ?? member.startOffset;
  }

  /** Runs `work` after every earlier work of the same group and topic has settled. */
  private withGroupLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.groupLocks.get(key) ?? Promise.resolve()).then(work);
    this.groupLocks.set(
      key,
      result.then(
        () => undefined,
        () => undefined,
      ),
    );
    return result;
  }

  private topic(name: string): TopicLog {
    const log = this.topics.get(name);
    if (!log) throw new Error(`Unknown topic ${name}: create it with ensureTopic first`);
    return log;
  }

  private assertOpen(): void {
    if (this.closing.signal.aborted) throw new Error('The event bus is closed');
  }
}

function groupKey(groupId: string, topic: string): string {
  return JSON.stringify([groupId, topic]);
}

function toDeliveredMessage(topic: string, offset: number, message: StoredMessage): DeliveredMessage {
  return {
    topic,
    partition: 0,
    offset: offset.toString(),
    key: message.key,
    headers: { ...message.headers },
    // A fresh copy of an envelope that publish validated (nothing else enters a topic): no second check.
    value: JSON.parse(message.value) as PublicEvent,
  };
}

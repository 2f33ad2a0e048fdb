/**
 * The EventBus port: the relay publishes committed events to topics; consumer groups (webhooks,
 * log streams) drive outbound work from them. Adapters: Kafka (KAFKA_BROKERS set) and an in-process
 * bus with the same contract. The contract, run against both by one suite:
 *
 * - `publish` resolves only once the whole batch is durably acknowledged (acks=all on Kafka; on the
 *   in-process bus, which has no disk, once every subscribed group committed it), so a relay may
 *   advance its checkpoint afterwards.
 * - Messages with the same key (the stream id) are delivered in publish order.
 * - Every consumer group receives every message; inside a group each message goes to one member.
 * - At-least-once: offsets are committed only after the handler resolved. A handler that throws
 *   gets the same messages again, from the committed offset, after a short backoff. Effects must
 *   therefore be idempotent (see deduplicating-consumer.ts).
 */
import type { EventMetadata } from '../eventstore/port.ts';

/**
 * The versioned public envelope of an event on the bus. The integers of the event store (bigint)
 * travel as decimal strings; tenant and time are lifted out of the metadata for routing.
 */
export interface PublicEvent {
  version: 1;
  id: string;
  type: string;
  tenantId: string;
  streamId: string;
  /** 0-based revision inside the stream, as a decimal string. */
  revision: string;
  /** Position in the global log, as a decimal string. */
  position: string;
  occurredAt: string;
  data: unknown;
  metadata: EventMetadata;
}

export interface OutgoingMessage {
  /** Partitioning and ordering key: the stream id. */
  key: string;
  headers: Record<string, string>;
  value: PublicEvent;
}

export interface DeliveredMessage extends OutgoingMessage {
  topic: string;
  partition: number;
  /** Offset inside the partition, as a decimal string. */
  offset: string;
}

/**
 * Receives the next messages of one partition in offset order. When it resolves their offsets are
 * committed; when it throws the same messages come again. Batches of different partitions may be
 * handled concurrently. A handler must not wait for a publish to a topic its own group consumes.
 */
export type BatchHandler = (messages: readonly DeliveredMessage[]) => Promise<void>;

export interface SubscribeOptions {
  groupId: string;
  topic: string;
  /** Where a group without committed offsets starts: the oldest retained message, or new ones only. */
  fromBeginning: boolean;
  handler: BatchHandler;
  /**
   * The event types (a message's `event-type` header) the handler acts on. A message of another type
   * is committed with its batch without being decoded or handed over (a batch of only such messages
   * calls no handler); one without the header is handed over as always. Unset: every message.
   */
  takes?: (eventType: string) => boolean;
}

export interface Subscription {
  /** Stops delivery: waits for the running handler, commits its offsets, then leaves the group. */
  close(): Promise<void>;
}

export interface ConsumerGroup {
  groupId: string;
  topic: string;
}

export interface TopicOptions {
  partitions: number;
  replicationFactor: number;
}

export interface EventBus {
  /** Creates the topic when missing (topics are never created implicitly by publish). */
  ensureTopic(topic: string, options: TopicOptions): Promise<void>;
  publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void>;
  /** Resolves once the consumer has joined its group. */
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** Messages of the topic the group has not committed yet, summed over partitions (for a gauge). */
  consumerLag(groupId: string, topic: string): Promise<number>;
  /** The groups this bus instance consumes for, each with its topic once (for the lag gauge). */
  subscribedGroups(): ConsumerGroup[];
  /** Waits for publishes in flight, closes every subscription (committing its offsets), disconnects. */
  close(): Promise<void>;
}

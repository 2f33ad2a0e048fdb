import { Kafka, Partitioners, type Admin, type Consumer, type EachBatchPayload, type IHeaders, type KafkaMessage, type Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { distinctGroups, passedOver } from './consumer-groups.ts';
import { kafkaLogLevelFor, pinoLogCreator } from './kafka-logging.ts';
import type { ConsumerGroup, DeliveredMessage, EventBus, OutgoingMessage, SubscribeOptions, Subscription, TopicOptions } from './port.ts';
import { decodePublicEvent, encodePublicEvent } from './public-event.ts';
import { waitBeforeRedelivery } from './redelivery.ts';

export interface KafkaEventBusOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
}

/** Kafka's "all in-sync replicas": publish resolves only once the batch is durable. */
const ACKS_ALL = -1;
/** Batches of different partitions a member hands to its handler at once. */
const PARTITIONS_CONSUMED_CONCURRENTLY = 4;
/** Bounds how long an idle fetch (and therefore a consumer's shutdown) may take. */
const FETCH_MAX_WAIT_MS = 1000;

/** The EventBus on Apache Kafka through kafkajs. */
export class KafkaEventBus implements EventBus {
  private readonly subscriptions = new Set<KafkaSubscription>();
  private readonly publishesInFlight = new Set<Promise<unknown>>();
  private closed = false;

  private constructor(
    private readonly kafka: Kafka,
    private readonly producer: Producer,
    private readonly admin: Admin,
    private readonly logger: Logger,
  ) {}

  /** Connects the producer and the admin client, so a wrong KAFKA_BROKERS fails at start. */
  static async connect(options: KafkaEventBusOptions): Promise<KafkaEventBus> {
    const kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: kafkaLogLevelFor(options.logger),
      logCreator: pinoLogCreator(options.logger),
    });
    const producer = kafka.producer({
      // The idempotent producer de-duplicates its own retries on the broker; one request in flight
      // keeps retried batches from overtaking later ones, which per-key order depends on.
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // Chosen explicitly (this also silences kafkajs's v2 warning): murmur2 on the key, the same
      // partition a Java client would choose for that stream id.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    const admin = kafka.admin();
    await Promise.all([producer.connect(), admin.connect()]);
    return new KafkaEventBus(kafka, producer, admin, options.logger);
  }

  async ensureTopic(topic: string, options: TopicOptions): Promise<void> {
    this.assertOpen();
    // Resolves false (no error) when the topic already exists.
    await this.admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: options.partitions, replicationFactor: options.replicationFactor }],
    });
  }

  async publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    this.assertOpen();
    if (messages.length === 0) return;
    const sending = this.producer.send({
      topic,
      acks: ACKS_ALL,
      messages: messages.map((message) => ({
        key: message.key,
        headers: message.headers,
        value: encodePublicEvent(message.value),
      })),
    });
    this.publishesInFlight.add(sending);
    try {
      await sending;
    } finally {
      this.publishesInFlight.delete(sending);
    }
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.assertOpen();
    const consumer = this.kafka.consumer({
      groupId: options.groupId,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: FETCH_MAX_WAIT_MS,
    });
    const logger = this.logger.child({ groupId: options.groupId, topic: options.topic });
    const subscription: KafkaSubscription = new KafkaSubscription(consumer, options, logger, () =>
      this.subscriptions.delete(subscription),
    );
    await subscription.start();
    this.subscriptions.add(subscription);
    return subscription;
  }

  async consumerLag(groupId: string, topic: string): Promise<number> {
    this.assertOpen();
    const [partitions, [groupOffsets]] = await Promise.all([
      this.admin.fetchTopicOffsets(topic),
      this.admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    const committed = new Map(groupOffsets?.partitions.map((p) => [p.partition, BigInt(p.offset)]));
    let lag = 0n;
    for (const { partition, high, low } of partitions) {
      const offset = committed.get(partition) ?? -1n;
      // -1: nothing committed yet, so everything still retained is pending.
      lag += BigInt(high) - (offset >= 0n ? offset : BigInt(low));
    }
    return Number(lag);
  }

  subscribedGroups(): ConsumerGroup[] {
    return distinctGroups(this.subscriptions);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled(this.publishesInFlight);
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    await Promise.all([this.producer.disconnect(), this.admin.disconnect()]);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The event bus is closed');
  }
}

class KafkaSubscription implements Subscription {
  // Cuts a redelivery backoff short on close; kafkajs itself waits for the running batch.
  private readonly stopping = new AbortController();
  /** Restarts after fatal crashes, one at a time; close() waits for the one under way. */
  private restarting: Promise<void> = Promise.resolve();
  private fatalCrashesInARow = 0;
  /**
   * Partitions whose position this member has committed since it last joined its group. On a
   * partition where the group never committed, kafkajs starts where `fromBeginning` says (the end,
   * for the outbound engine) and keeps that position in memory only: a member killed while its
   * handler held the partition's first batch would leave nothing committed, and the next member
   * would start at the end again, past the batch, which the group would then never see. So a
   * partition's first batch after a join commits its first offset before it is handed over.
   */
  private readonly positionsCommitted = new Set<number>();

  constructor(
    private readonly consumer: Consumer,
    readonly options: SubscribeOptions,
    private readonly logger: Logger,
    private readonly onClose: () => void,
  ) {}

  async start(): Promise<void> {
    this.restartAfterFatalCrashes();
    await this.run();
  }

  async close(): Promise<void> {
    this.stopping.abort();
    await this.restarting;
    // Waits for the batch in progress (whose offsets deliver() commits), then leaves the group.
    await this.consumer.disconnect();
    this.onClose();
  }

  private async run(): Promise<void> {
    try {
      await this.consumer.connect();
      await this.consumer.subscribe({ topics: [this.options.topic], fromBeginning: this.options.fromBeginning });
      // run() resolves after the group join. Offsets are resolved and committed by deliver() only,
      // after the handler succeeded.
      await this.consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        // Partitions are independent (order is per key): a slow effect on one does not hold up the others.
        partitionsConsumedConcurrently: PARTITIONS_CONSUMED_CONCURRENTLY,
        eachBatch: (payload) => this.deliver(payload),
      });
    } catch (error) {
      await this.consumer.disconnect();
      throw error;
    }
  }

  /**
   * kafkajs restarts a consumer after a crash it deems retriable; after any other (a join refused
   * with INCONSISTENT_GROUP_PROTOCOL, say) the consumer stays stopped for good and the group's
   * events silently stop flowing. Such a consumer is started again here, with the redelivery
   * backoff between attempts until it joins its group.
   */
  private restartAfterFatalCrashes(): void {
    const { CRASH, GROUP_JOIN } = this.consumer.events;
    this.consumer.on(GROUP_JOIN, () => {
      this.fatalCrashesInARow = 0;
      this.positionsCommitted.clear();
    });
    this.consumer.on(CRASH, ({ payload }) => {
      if (payload.restart || this.stopping.signal.aborted) return;
      this.restarting = this.restarting.then(() => this.restart(payload.error));
    });
  }

  private async restart(error: unknown): Promise<void> {
    const { signal } = this.stopping;
    while (!signal.aborted) {
      this.fatalCrashesInARow++;
      this.logger.error({ err: error, crashesInARow: this.fatalCrashesInARow }, 'Kafka consumer stopped on an error kafkajs does not retry; starting it again');
      await waitBeforeRedelivery(this.fatalCrashesInARow, signal);
      if (signal.aborted) return;
      try {
        await this.run();
        return;
      } catch (failure) {
        error = failure;
      }
    }
  }

  /** Hands the batch over until the handler succeeds, the consumer stops, or the partition moves. */
  private async deliver(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    if (batch.isEmpty()) return;
    for (let attempt = 1; this.mayContinue(payload); attempt++) {
      try {
        const delivered = batch.messages
          .filter((message) => !passedOver(this.options, headerText(message.headers?.['event-type'])))
          .map((message) => toDeliveredMessage(batch.topic, batch.partition, message));
        if (delivered.length > 0) {
          await this.commitPosition(payload);
          await this.options.handler(delivered);
        }
      } catch (error) {
        const context = { err: error, partition: batch.partition, firstOffset: batch.firstOffset(), attempt };
        this.logger.warn(context, 'event handler failed; redelivering the batch');
        await waitBeforeRedelivery(attempt, this.stopping.signal);
        await payload.heartbeat();
        continue;
      }
      const lastOffset = batch.lastOffset();
      payload.resolveOffset(lastOffset);
      // A commit names the next offset to read.
      const next = (BigInt(lastOffset) + 1n).toString();
      await payload.commitOffsetsIfNecessary({
        topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }],
      });
      return;
    }
  }

  /** Commits where the batch's partition starts, once per partition after each join (see positionsCommitted). */
  private async commitPosition(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    if (this.positionsCommitted.has(batch.partition)) return;
    await payload.commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: batch.firstOffset()! }] }] });
    this.positionsCommitted.add(batch.partition);
  }

  private mayContinue(payload: EachBatchPayload): boolean {
    return !this.stopping.signal.aborted && payload.isRunning() && !payload.isStale();
  }
}

function toDeliveredMessage(topic: string, partition: number, message: KafkaMessage): DeliveredMessage {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key?.toString() ?? '',
    headers: headersToStrings(message.headers),
    value: decodePublicEvent(message.value?.toString() ?? ''),
  };
}

function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const text = headerText(value);
    if (text !== undefined) result[name] = text;
  }
  return result;
}

/** A header's text; a header may repeat, and the envelope keeps the first occurrence. */
function headerText(value: IHeaders[string]): string | undefined {
  return (Array.isArray(value) ? value[0] : value)?.toString();
}

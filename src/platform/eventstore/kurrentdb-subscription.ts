import {
  excludeSystemEvents,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type KurrentDBClient,
  type RecordedEvent as KurrentRecordedEvent,
} from '@kurrent/kurrentdb-client';
import { isUserEvent, readPositionAt, toRecorded } from './kurrentdb-mapping.ts';
import type { SubscribeOptions, Subscription } from './port.ts';

const DEFAULT_BATCH_SIZE = 500;
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

/**
 * Catch-up then live delivery over the client's $all subscription. A batch is whatever the
 * subscription has buffered (up to batchSize) and is handed over only after the previous one
 * resolved. When the handler fails or the subscription drops, the server subscription is ended
 * and, after a backoff, a new one starts from the last position handled: the same events come
 * again instead of being skipped.
 */
export class KurrentSubscription implements Subscription {
  private closed = false;
  private current: AllStreamSubscription | undefined;
  private wakeOnClose: () => void = () => undefined;
  private readonly closing = new Promise<void>((resolve) => {
    this.wakeOnClose = resolve;
  });
  private readonly done: Promise<void>;

  constructor(
    private readonly client: KurrentDBClient,
    private readonly options: SubscribeOptions,
  ) {
    this.done = this.run();
  }

  private async run(): Promise<void> {
    let after = this.options.after;
    let retryMs = FIRST_RETRY_MS;
    while (!this.closed) {
      const subscription = this.client.subscribeToAll({ fromPosition: readPositionAt(after), filter: excludeSystemEvents() });
      this.current = subscription;
      try {
        for await (const batch of batches(subscription, this.options.batchSize ?? DEFAULT_BATCH_SIZE)) {
          if (this.closed) break;
          // The server filters event types only; the start position itself may come back too.
          const events = batch.map(toRecorded).filter((e) => isUserEvent(e) && (after === undefined || e.position > after));
          if (events.length === 0) continue;
          await this.options.onEvents(events);
          after = events.at(-1)!.position;
          retryMs = FIRST_RETRY_MS;
        }
      } catch (error) {
        if (this.closed) break;
        this.options.onError?.(error);
      } finally {
        await stop(subscription);
      }
      await this.pause(retryMs);
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    }
  }

  private pause(ms: number): Promise<void> {
    return Promise.race([new Promise<void>((resolve) => setTimeout(resolve, ms).unref()), this.closing]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeOnClose();
    this.current?.destroy(); // settles a pending read; run() then ends the server subscription
    await this.done;
  }
}

/** Waits for one event, then takes whatever else the subscription has buffered, up to `size`. */
async function* batches(subscription: AllStreamSubscription, size: number): AsyncGenerator<KurrentRecordedEvent[]> {
  for await (const first of subscription) {
    const buffered: AllStreamResolvedEvent[] = [first];
    let next: AllStreamResolvedEvent | null;
    while (buffered.length < size && (next = subscription.read()) !== null) buffered.push(next);
    yield buffered.flatMap(({ event }) => (event ? [event] : []));
  }
}

async function stop(subscription: AllStreamSubscription): Promise<void> {
  subscription.destroy();
  // Errors the connection reports after this have no reader left; unheard, they would crash.
  subscription.on('error', () => undefined);
  // A subscription that never got its connection has nothing to cancel.
  await subscription.unsubscribe().catch(() => undefined);
}

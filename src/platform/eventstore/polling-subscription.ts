import type { RecordedEvent, SubscribeOptions, Subscription } from './port.ts';

/** A page of the log and whether, when it was read, committed events lay past it that readers may not see yet. */
export interface TailPage {
  events: RecordedEvent[];
  invisibleTail: boolean;
}

export interface PollingSource {
  read(after: bigint | undefined, limit: number): Promise<TailPage>;
  /** A marker of the latest news; `waitForNews` returns at once if news came after it. */
  newsMarker(): number;
  /** Resolves on news after `since`, or after `timeoutMs`. */
  waitForNews(timeoutMs: number, since: number): Promise<void>;
  pollIntervalMs: number;
}

const MIN_RETRY_MS = 5;
const MAX_RETRY_MS = 250;
const MAX_ERROR_BACKOFF_MS = 5000;

/**
 * Catch-up then live delivery over a pull source. A batch is handed over only after the previous
 * one resolved; a failing handler gets the same batch again after a backoff, never a later one.
 */
export class PollingSubscription implements Subscription {
  private closed = false;
  private readonly done: Promise<void>;
  private wakeOnClose: () => void = () => undefined;
  private readonly closing = new Promise<void>((resolve) => {
    this.wakeOnClose = resolve;
  });

  constructor(private readonly options: SubscribeOptions & PollingSource) {
    this.done = this.run();
  }

  private async run(): Promise<void> {
    const { batchSize = 500 } = this.options;
    let after = this.options.after;
    let invisibleRetryMs = MIN_RETRY_MS;
    let errorBackoffMs = 100;
    while (!this.closed) {
      const marker = this.options.newsMarker();
      try {
        const { events: batch, invisibleTail } = await this.options.read(after, batchSize);
        if (this.closed) break;
        if (batch.length > 0) {
          await this.options.onEvents(batch);
          after = batch.at(-1)!.position;
          invisibleRetryMs = MIN_RETRY_MS;
          errorBackoffMs = 100;
          // A full page: more may be visible already. A shorter one reached what its snapshot could
          // see; anything committed since then was announced after `marker`, so the wait below ends at once.
          if (batch.length === batchSize) continue;
        }
        // An older transaction still runs: its events (or others') will become visible shortly,
        // usually when an append commits and notifies, so news ends the pause early.
        if (invisibleTail) {
          await Promise.race([this.pause(invisibleRetryMs), this.options.waitForNews(invisibleRetryMs, marker)]);
          invisibleRetryMs = Math.min(invisibleRetryMs * 2, MAX_RETRY_MS);
          continue;
        }
        await Promise.race([this.options.waitForNews(this.options.pollIntervalMs, marker), this.closing]);
      } catch (error) {
        this.options.onError?.(error);
        await this.pause(errorBackoffMs);
        errorBackoffMs = Math.min(errorBackoffMs * 2, MAX_ERROR_BACKOFF_MS);
      }
    }
  }

  private pause(ms: number): Promise<void> {
    return Promise.race([new Promise<void>((resolve) => setTimeout(resolve, ms).unref()), this.closing]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeOnClose();
    await this.done;
  }
}

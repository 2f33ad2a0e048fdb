import type { RecordedEvent } from './port.ts';

interface Page {
  /** Read strictly after this position: the page holds every event up to its last one. */
  after: bigint;
  events: RecordedEvent[];
}

/**
 * Pages of the log that followers catching up on history read, kept for a moment so that followers
 * close behind each other (every projection of a rebuild or a restart, starting together) read and
 * decode the log once instead of once each. A page read after position A holds every event in
 * (A, its last position]: the store returns only positions below its visibility bound, where
 * nothing can appear later. So any follower between A and that last position can take the rest of
 * the page instead of reading; followers asking from the same position while a read is under way
 * share it.
 */
export class HistoryPages {
  private readonly pages: Page[] = [];
  private readonly reading = new Map<bigint, Promise<RecordedEvent[]>>();

  constructor(
    private readonly read: (after: bigint, limit: number) => Promise<RecordedEvent[]>,
    /** Pages kept (the most recently read): a follower further behind reads on its own. */
    private readonly kept: number,
  ) {}

  /** At most `limit` events after `position`, from a kept page when one covers it; `pageSize` events are read otherwise. */
  async after(position: bigint, limit: number, pageSize: number): Promise<RecordedEvent[]> {
    const page = this.pages.find((p) => p.after <= position && position < p.events.at(-1)!.position);
    const events = page ? page.events : await this.readFrom(position, Math.max(pageSize, limit));
    const first = events.findIndex((event) => event.position > position);
    return first < 0 ? [] : events.slice(first, first + limit);
  }

  private readFrom(position: bigint, pageSize: number): Promise<RecordedEvent[]> {
    let pending = this.reading.get(position);
    if (!pending) {
      pending = this.read(position, pageSize)
        .then((events) => {
          if (events.length > 0) this.keep({ after: position, events });
          return events;
        })
        .finally(() => this.reading.delete(position));
      this.reading.set(position, pending);
    }
    return pending;
  }

  private keep(page: Page): void {
    this.pages.push(page);
    if (this.pages.length > this.kept) this.pages.shift();
  }
}

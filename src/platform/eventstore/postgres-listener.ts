import { randomUUID } from 'node:crypto';
import pg from 'pg';

/**
 * One LISTEN connection per store that wakes every waiting subscriber on NOTIFY. A generation
 * counter closes the gap between "read found nothing" and "started waiting": a notification in
 * between is not lost. If the connection fails, waits simply time out (the poll fallback).
 * A notification carries its sender's id: this listener's own come back through PostgreSQL after
 * `announce` already woke its waiters, and would only make them read the log again for nothing.
 */
export class NotificationListener {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private generation = 0;
  private waiters = new Set<() => void>();
  private closed = false;
  private notifying: Promise<void> | null = null;
  private notifyAgain = false;
  private readonly senderId = randomUUID();

  constructor(
    private readonly pool: pg.Pool,
    private readonly channel: string,
  ) {}

  /** The current generation; pass it to `wait` to return at once if a notification came since. */
  get current(): number {
    return this.generation;
  }

  async wait(timeoutMs: number, sinceGeneration = this.generation): Promise<void> {
    if (this.closed) return;
    void this.ensureConnected();
    if (this.generation !== sinceGeneration) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      this.waiters.add(done);
    });
  }

  private ensureConnected(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.pool.options);
    client.on('notification', (message) => {
      if (message.payload !== this.senderId) this.notifyAll();
    });
    client.on('error', () => {
      if (this.client === client) this.client = null;
      client.end().catch(() => undefined);
    });
    try {
      await client.connect();
      await client.query(`listen ${pg.escapeIdentifier(this.channel)}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      // Anything appended before LISTEN took effect was not announced: let waiters look again.
      this.notifyAll();
    } catch {
      await client.end().catch(() => undefined);
    }
  }

  /** Wakes this process's waiters at once (its own commit), without the round trip through PostgreSQL. */
  announce(): void {
    this.notifyAll();
  }

  /**
   * Wakes every instance's waiters (every instance LISTENs) after a commit, in a statement of its own
   * that has no transaction id, so it needs no WAL flush (a NOTIFY inside the transaction would
   * serialise the commits); calls made meanwhile share the next one. If the process dies in
   * between, waiters still look at their next poll.
   */
  notifyEveryInstance(): void {
    if (this.notifying) {
      this.notifyAgain = true;
      return;
    }
    this.notifying = this.pool
      .query({ name: 'events_notify', text: 'select pg_notify($1, $2)', values: [this.channel, this.senderId] })
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.notifying = null;
        if (this.notifyAgain) {
          this.notifyAgain = false;
          this.notifyEveryInstance();
        }
      });
  }

  private notifyAll(): void {
    this.generation += 1;
    for (const wake of [...this.waiters]) wake();
  }

  async close(): Promise<void> {
    while (this.notifying) await this.notifying;
    this.closed = true;
    this.notifyAll();
    await this.connecting;
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }
}

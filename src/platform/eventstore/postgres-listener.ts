import { randomUUID } from 'node:crypto';
import pg from 'pg';

/** The payload of a listener's hello starts with this (then its id); a commit's NOTIFY carries the bare id. */
const HELLO = 'hello:';

/**
 * One LISTEN connection per store that wakes every waiting subscriber on NOTIFY. A generation
 * counter closes the gap between "read found nothing" and "started waiting": a notification in
 * between is not lost. If the connection fails, waits simply time out (the poll fallback).
 * A notification carries its sender's id: this listener's own come back through PostgreSQL after
 * `announce` already woke its waiters, and would only make them read the log again for nothing.
 *
 * A store whose listener has heard no other yet sends no NOTIFY: nobody else would hear it. Each
 * listener says hello on the channel once its LISTEN is in effect (after every reconnection) and
 * each listener hearing a hello answers with a NOTIFY, so two listeners of a channel know of each
 * other one round trip after the later one started listening; the first time a store hears another
 * it notifies at once, which wakes the other for whatever this one committed without a NOTIFY
 * before. A store whose listener is not connected (it never waited, or lost its connection), or
 * could not say hello, notifies every time, as it cannot know.
 */
export class NotificationListener {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private generation = 0;
  private waiters = new Set<() => void>();
  private closed = false;
  private notifying: Promise<boolean> | null = null;
  private notifyAgain = false;
  private readonly senderId = randomUUID();
  /** Another listener of the channel has been heard (a notification, a hello or an answer): from then on, every commit notifies. */
  private heardAnother = false;
  /** NOTIFY statements in flight (close waits for them). */
  private readonly sending = new Set<Promise<boolean>>();

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
    client.on('notification', ({ payload = '' }) => this.heard(payload));
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
      // Listeners already there answer: from their answer on, this store's commits notify.
      void this.send(`${HELLO}${this.senderId}`).then((sent) => {
        if (!sent) this.heardAnother = true;
      });
    } catch {
      await client.end().catch(() => undefined);
    }
  }

  /** Wakes this process's waiters at once (its own commit), without the round trip through PostgreSQL. */
  announce(): void {
    this.notifyAll();
  }

  /**
   * Wakes every other instance's waiters after a commit (none when no other was heard), in a statement
   * of its own that has no transaction id, so it needs no WAL flush (a NOTIFY inside the transaction
   * would serialise the commits); calls made meanwhile share the next one. If the process dies in
   * between, waiters still look at their next poll.
   */
  notifyEveryInstance(): void {
    if (this.client && !this.heardAnother) return;
    if (this.notifying) {
      this.notifyAgain = true;
      return;
    }
    this.notifying = this.send(this.senderId).finally(() => {
      this.notifying = null;
      if (this.notifyAgain) {
        this.notifyAgain = false;
        this.notifyEveryInstance();
      }
    });
  }

  /**
   * A notification of another store: its commit (its bare id) wakes the waiters; its hello does not,
   * and is answered with a NOTIFY of this store's id. Either makes every later commit of this store
   * notify, and the first one notifies at once: what this store committed before it knew of the
   * other went without a NOTIFY.
   */
  private heard(payload: string): void {
    const hello = payload.startsWith(HELLO);
    if ((hello ? payload.slice(HELLO.length) : payload) === this.senderId) return;
    const first = !this.heardAnother;
    this.heardAnother = true;
    if (hello || first) this.notifyEveryInstance();
    if (!hello) this.notifyAll();
  }

  /** One NOTIFY on the channel, in a statement of its own (false: it failed; not retried, waiters poll). */
  private send(payload: string): Promise<boolean> {
    const sent: Promise<boolean> = this.pool
      .query({ name: 'events_notify', text: 'select pg_notify($1, $2)', values: [this.channel, payload] })
      .then(
        () => true,
        () => false,
      )
      .finally(() => this.sending.delete(sent));
    this.sending.add(sent);
    return sent;
  }

  private notifyAll(): void {
    this.generation += 1;
    for (const wake of [...this.waiters]) wake();
  }

  async close(): Promise<void> {
    while (this.notifying) await this.notifying;
    this.closed = true;
    await Promise.all(this.sending);
    this.notifyAll();
    await this.connecting;
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }
}

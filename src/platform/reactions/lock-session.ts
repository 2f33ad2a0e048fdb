import pg from 'pg';

/**
 * A connection of its own, outside the pool, for the transactions that hold a reaction's lock
 * while its commands run. Those commands take pool connections; a lock holder taken from the pool
 * too could leave none for them in a small pool. Reconnects on the next transaction after a loss.
 */
export class LockSession {
  private client: pg.Client | null = null;

  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly name: string,
  ) {}

  /** Runs `work`, which opens and commits its transaction; when it throws, what it left open is rolled back. */
  async transaction<T>(work: (tx: pg.Client) => Promise<T>): Promise<T> {
    const client = this.client ?? (await this.connect());
    try {
      return await work(client);
    } catch (error) {
      // A failed rollback means the connection is gone: start the next transaction on a new one.
      if (!(await client.query('rollback').then(() => true, () => false))) await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ ...this.connection, application_name: `iam-reaction:${this.name}`, keepAlive: true });
    // A lost connection surfaces as the failing statement; unheard, the error event would crash the process.
    client.on('error', () => undefined);
    await client.connect();
    this.client = client;
    return client;
  }
}

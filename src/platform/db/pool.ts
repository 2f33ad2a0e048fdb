import pg from 'pg';

// Event positions and revisions are bigints; hand them to the code as strings, never as lossy numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => value);

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that can run a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

export function createPool(url: string, max: number): pg.Pool {
  return tolerant(new pg.Pool({ connectionString: url, max, application_name: 'iam-service' }));
}

/**
 * A pool of `max` pipelined connections to `pool`'s database: queries issued without waiting go out
 * at once and are answered in order. Its idle connections never keep the process alive.
 */
export function pipelinedPool(pool: pg.Pool, max: number): pg.Pool {
  return tolerant(new pg.Pool({ ...pool.options, max, pipeline: true, allowExitOnIdle: true }));
}

function tolerant(pool: pg.Pool): pg.Pool {
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor may a checked-out client between two statements (the pool listens only to idle ones): the
  // statement in progress or the next one fails instead, and the pool discards the broken client.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Runs `issue`, which sends statements on `client` without waiting in between (a pipelined client),
 * with the client's socket corked: they leave in one write instead of one each. A write to a
 * PostgreSQL on the same machine costs the sender tens of µs, as the kernel runs the receiving side in it.
 */
export function inOneWrite<T>(client: pg.PoolClient, issue: () => T): T {
  const { stream } = (client as unknown as pg.Client).connection;
  stream.cork();
  try {
    return issue();
  } finally {
    stream.uncork();
  }
}

/** Runs `work` in one transaction on one client: commit on success, rollback on any error. */
export async function withTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await inTransaction(client, work);
  } finally {
    client.release();
  }
}

/** Runs `work` in one transaction on a connected client: commit on success, rollback on any error. */
export async function inTransaction<Client extends pg.ClientBase, T>(client: Client, work: (client: Client) => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}

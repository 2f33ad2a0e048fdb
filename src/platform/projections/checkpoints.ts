import type pg from 'pg';
import type { Pool, PoolClient, Queryable } from '../db/pool.ts';

export async function ensureCheckpoint(db: Queryable, name: string): Promise<bigint> {
  await db.query('insert into projection_checkpoints (name) values ($1) on conflict (name) do nothing', [name]);
  return readCheckpoint(db, name);
}

export async function readCheckpoint(db: Queryable, name: string): Promise<bigint> {
  const { rows } = await db.query<{ position: string }>('select position from projection_checkpoints where name = $1', [name]);
  return BigInt(rows[0]?.position ?? 0);
}

/** Two-key advisory locks of this class never collide with the event store's one-key stream locks nor the reactions' class. */
export const LOCK_CLASS = 0x70726f6a; // 'proj'

/**
 * Makes this transaction the projection's only applier until it ends, with an advisory lock rather
 * than a row lock (as the reactions do): a row lock gives the transaction an id from its first round
 * trip, and every global reader of the log waits for transactions with an id. The transaction now
 * gets one only when a handler writes, a round trip later, or never when another runner applied the batch.
 */
export async function lockCheckpoint(tx: PoolClient, name: string): Promise<bigint> {
  await tx.query('select pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, name]);
  return readCheckpoint(tx, name);
}

export async function saveCheckpoint(tx: PoolClient, name: string, position: bigint): Promise<void> {
  await tx.query('update projection_checkpoints set position = $2, updated_at = now() where name = $1', [
    name,
    position.toString(),
  ]);
}

/**
 * One projection batch as a transaction that opens with the checkpoint locked (lockCheckpoint) and closes by
 * moving it, each in a single round trip (a simple query of several statements; the name and the
 * position go in as literals), so a small batch costs its own statements plus two. `work` gets the
 * locked checkpoint and answers the position to save (null: save nothing) with its result.
 * Commits without waiting for the WAL flush: a crash can lose only a last batch together with its
 * checkpoint (one transaction), and the projection applies it again from the log.
 */
export async function checkpointedBatch<T>(
  pool: Pool,
  name: string,
  work: (tx: PoolClient, checkpoint: bigint) => Promise<{ save: bigint | null; result: T }>,
): Promise<T> {
  const client = await pool.connect();
  try {
    const row = client.escapeLiteral(name);
    const opened = (await client.query(
      `begin; set local synchronous_commit = off; select pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${row})); ` +
        `select position from projection_checkpoints where name = ${row}`,
    )) as unknown as pg.QueryResult<{ position: string }>[];
    const { save, result } = await work(client, BigInt(opened[3]?.rows[0]?.position ?? 0));
    await client.query(save === null ? 'commit' : `update projection_checkpoints set position = ${save}, updated_at = now() where name = ${row}; commit`);
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

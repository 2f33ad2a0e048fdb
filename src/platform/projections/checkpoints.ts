import type { PoolClient, Queryable } from '../db/pool.ts';

export async function ensureCheckpoint(db: Queryable, name: string): Promise<bigint> {
  await db.query('insert into projection_checkpoints (name) values ($1) on conflict (name) do nothing', [name]);
  return readCheckpoint(db, name);
}

export async function readCheckpoint(db: Queryable, name: string): Promise<bigint> {
  const { rows } = await db.query<{ position: string }>('select position from projection_checkpoints where name = $1', [name]);
  return BigInt(rows[0]?.position ?? 0);
}

/** Locks the checkpoint row for the rest of the transaction: one applier per projection at a time. */
export async function lockCheckpoint(tx: PoolClient, name: string): Promise<bigint> {
  const { rows } = await tx.query<{ position: string }>(
    'select position from projection_checkpoints where name = $1 for update',
    [name],
  );
  return BigInt(rows[0]?.position ?? 0);
}

export async function saveCheckpoint(tx: PoolClient, name: string, position: bigint): Promise<void> {
  await tx.query('update projection_checkpoints set position = $2, updated_at = now() where name = $1', [
    name,
    position.toString(),
  ]);
}

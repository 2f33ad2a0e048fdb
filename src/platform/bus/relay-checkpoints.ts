import type { Queryable } from '../db/pool.ts';

/** The relay's checkpoint of `topic`: the last position the bus acknowledged (0 before the first). */
export async function ensureRelayCheckpoint(db: Queryable, topic: string): Promise<bigint> {
  await db.query('insert into relay_checkpoints (topic) values ($1) on conflict (topic) do nothing', [topic]);
  return readRelayCheckpoint(db, topic);
}

export async function readRelayCheckpoint(db: Queryable, topic: string): Promise<bigint> {
  const { rows } = await db.query<{ position: string }>('select position from relay_checkpoints where topic = $1', [topic]);
  return BigInt(rows[0]?.position ?? 0);
}

export async function saveRelayCheckpoint(db: Queryable, topic: string, position: bigint): Promise<void> {
  await db.query('update relay_checkpoints set position = $2, updated_at = now() where topic = $1', [topic, position.toString()]);
}

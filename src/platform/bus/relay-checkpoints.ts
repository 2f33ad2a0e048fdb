import type { Queryable } from '../db/pool.ts';

/** The relay's checkpoint of `topic`: the last position the bus acknowledged (0 before the first). */
export async function ensureRelayCheckpoint(db: Queryable, topic: string): Promise<bigint> {
  // Read first: a relay taking over an existing checkpoint writes nothing before its first batch.
  const existing = await findRelayCheckpoint(db, topic);
  if (existing !== null) return existing;
  await db.query('insert into relay_checkpoints (topic) values ($1) on conflict (topic) do nothing', [topic]);
  return readRelayCheckpoint(db, topic);
}

async function findRelayCheckpoint(db: Queryable, topic: string): Promise<bigint | null> {
  const { rows } = await db.query<{ position: string }>('select position from relay_checkpoints where topic = $1', [topic]);
  return rows[0] ? BigInt(rows[0].position) : null;
}

export async function readRelayCheckpoint(db: Queryable, topic: string): Promise<bigint> {
  return (await findRelayCheckpoint(db, topic)) ?? 0n;
}

export async function saveRelayCheckpoint(db: Queryable, topic: string, position: bigint): Promise<void> {
  // Named: planned once per connection (a row per topic: the plan never changes), and this runs every batch.
  await db.query({ name: 'relay_checkpoint_save', text: 'update relay_checkpoints set position = $2, updated_at = now() where topic = $1', values: [topic, position.toString()] });
}

import type { Queryable } from '../db/pool.ts';

export interface ReactionCheckpoint {
  /** Every event up to here has been reacted to. */
  position: bigint;
  /** The highest position the reaction's commands appended so far. */
  caused: bigint;
}

interface Row {
  position: string;
  caused_position: string;
}

const toCheckpoint = (row: Row | undefined): ReactionCheckpoint => ({
  position: BigInt(row?.position ?? 0),
  caused: BigInt(row?.caused_position ?? 0),
});

/** Two-key advisory locks of this class never collide with the event store's one-key stream locks. */
const LOCK_CLASS = 0x72656163; // 'reac'

export async function ensureReactionCheckpoint(db: Queryable, name: string): Promise<ReactionCheckpoint> {
  await db.query('insert into reaction_checkpoints (name) values ($1) on conflict (name) do nothing', [name]);
  const { rows } = await db.query<Row>('select position, caused_position from reaction_checkpoints where name = $1', [name]);
  return toCheckpoint(rows[0]);
}

/**
 * Makes this transaction the reaction's only applier until it ends, with an advisory lock rather
 * than a row lock: a row lock would give the transaction an id while commands run, and every
 * global reader of the log would wait for it.
 */
export async function lockReactionCheckpoint(tx: Queryable, name: string): Promise<ReactionCheckpoint> {
  await tx.query('select pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, name]);
  const { rows } = await tx.query<Row>('select position, caused_position from reaction_checkpoints where name = $1', [name]);
  return toCheckpoint(rows[0]);
}

export async function saveReactionCheckpoint(tx: Queryable, name: string, checkpoint: ReactionCheckpoint): Promise<void> {
  await tx.query('update reaction_checkpoints set position = $2, caused_position = $3, updated_at = now() where name = $1', [
    name,
    checkpoint.position.toString(),
    checkpoint.caused.toString(),
  ]);
}

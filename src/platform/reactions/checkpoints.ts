import type pg from 'pg';
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
 * Opens the batch's transaction as the reaction's only applier until it ends, with an advisory lock
 * rather than a row lock (a row lock would give the transaction an id while commands run, and every
 * global reader of the log would wait for it), and reads its checkpoint: one round trip (a simple
 * query of several statements; the name goes in as a literal).
 * Commits without waiting for the WAL flush: a crash can lose only the checkpoint's last moves, and
 * the reaction runs those batches again (its commands are idempotent, as for any redelivery).
 */
export async function beginLocked(tx: pg.ClientBase, name: string): Promise<ReactionCheckpoint> {
  const literal = tx.escapeLiteral(name);
  const opened = (await tx.query(
    `begin; set local synchronous_commit = off; select pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${literal})); ` +
      `select position, caused_position from reaction_checkpoints where name = ${literal}`,
  )) as unknown as pg.QueryResult<Row>[];
  return toCheckpoint(opened[3]!.rows[0]);
}

/** Moves the checkpoint (unless `next` is null) and commits, in one round trip. */
export async function commitCheckpoint(tx: pg.ClientBase, name: string, next: ReactionCheckpoint | null): Promise<void> {
  await tx.query(
    next === null
      ? 'commit'
      : `update reaction_checkpoints set position = ${next.position}, caused_position = ${next.caused}, updated_at = now() ` +
          `where name = ${tx.escapeLiteral(name)}; commit`,
  );
}

import type pg from 'pg';
import pgUtils from 'pg/lib/utils.js';
import { inOneWrite, type Pool, type PoolClient, type Queryable } from '../db/pool.ts';
import type { Statement } from './projection.ts';

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
 * The group's statements, named: planned once per connection. None can fall into migration 0028's
 * trap (a generic plan made on a young table, kept while it grows): the locks read no table, and
 * projection_checkpoints holds a row per projection, a number the code fixes.
 */
const GROUP_LOCKS = `select pg_advisory_xact_lock(${LOCK_CLASS}, l.key) from (select distinct hashtext(n) as key from unnest($1::text[]) n order by 1) l`;
const GROUP_CHECKPOINTS = 'select name, position from projection_checkpoints where name = any($1::text[])';
const GROUP_SAVE =
  'update projection_checkpoints c set position = v.position, updated_at = now() from unnest($1::text[], $2::bigint[]) v(name, position) where c.name = v.name';
/** Moves each checkpoint from the expected position, or raises (migration 0043). */
const GROUP_ADVANCE = 'select projection_checkpoints_advance($1::text[], $2::bigint[], $3::bigint[])';

/** A projection's batch: `work` gets its locked checkpoint and answers the position to save (null: save nothing) with its result. */
export interface CheckpointedWork<T> {
  name: string;
  work: (tx: PoolClient, checkpoint: bigint) => Promise<{ save: bigint | null; result: T }>;
  /** The checkpoint the batch expects (the one its worker saw last): lets it start before the checkpoint is read. */
  expected?: bigint;
  /**
   * The batch as statements that read nothing, to apply on `expected` (which it then needs), with
   * the position to save and the result `work` would answer there: a group made only of such
   * batches is sent whole, in one write and one round trip.
   */
  writes?: { statements: Statement[]; reached: bigint; result: T };
}

/**
 * Projection batches (of different projections) as one transaction that opens with their
 * checkpoints locked (as lockCheckpoint does, in key order, so two such transactions never wait
 * crosswise) and closes by moving them, each in a single round trip and a single socket write
 * (`pool` is pipelined: the statements of each go out together, corked by `inOneWrite`, and come
 * back in order; the locks, the checkpoints' read and their update are named statements,
 * GROUP_LOCKS and the next two). In between, the batches run side by side on the same client. With
 * `optimistic` and every batch's `expected` checkpoint, the batches start at once behind the
 * opening statements (in the same write, so still after the locks), and the checkpoints it reads
 * are compared afterwards: a batch that found another one fails the whole transaction (the caller
 * applies it again, not optimistically). So a group of one-statement batches costs two round trips
 * (three otherwise), not two plus one per batch, and one when every batch comes as `writes`
 * (sentWhole). Answers each batch's result, in order; if one
 * fails, the transaction is rolled back once every batch has settled.
 * Commits without waiting for the WAL flush: a crash can lose only last batches together with their
 * checkpoints (one transaction), and the projections apply them again from the log.
 */
export async function checkpointedBatches(pool: Pool, batches: readonly CheckpointedWork<unknown>[], optimistic = false): Promise<unknown[]> {
  const client = await pool.connect();
  try {
    if (optimistic && batches.every((batch) => batch.expected !== undefined && batch.writes)) return await sentWhole(client, batches);
    const names = batches.map((batch) => batch.name);
    const optimisticStart = optimistic && batches.every((batch) => batch.expected !== undefined);
    // The opening statements, and with an optimistic start the batches' first statements, in one write.
    const [opening, started] = inOneWrite(client, () => {
      const sent = Promise.all([
        client.query('begin; set local synchronous_commit = off'),
        client.query({ name: 'projection_group_locks', text: GROUP_LOCKS, values: [names] }),
        client.query<{ name: string; position: string }>({ name: 'projection_group_checkpoints', text: GROUP_CHECKPOINTS, values: [names] }),
      ]);
      sent.catch(() => undefined); // awaited below, maybe after the batches: its failure is not unhandled meanwhile
      return [sent, optimisticStart ? Promise.allSettled(batches.map((batch) => batch.work(client, batch.expected!))) : null] as const;
    });
    const readCheckpoints = async () => new Map((await opening)[2].rows.map((row) => [row.name, BigInt(row.position)]));
    let settled: PromiseSettledResult<{ save: bigint | null; result: unknown }>[];
    if (started) {
      settled = await started;
      const checkpoints = await readCheckpoints();
      if (batches.some((batch) => (checkpoints.get(batch.name) ?? 0n) !== batch.expected)) throw new Error('a checkpoint moved since its worker saw it');
    } else {
      const checkpoints = await readCheckpoints();
      settled = await Promise.allSettled(batches.map((batch) => batch.work(client, checkpoints.get(batch.name) ?? 0n)));
    }
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    const outcomes = settled.map((outcome) => (outcome as PromiseFulfilledResult<{ save: bigint | null; result: unknown }>).value);
    const saved = batches.flatMap((batch, i) => (outcomes[i]!.save === null ? [] : [{ name: batch.name, position: outcomes[i]!.save!.toString() }]));
    await inOneWrite(client, () =>
      Promise.all([
        saved.length === 0
          ? null
          : client.query({ name: 'projection_group_save', text: GROUP_SAVE, values: [saved.map((save) => save.name), saved.map((save) => save.position)] }),
        client.query('commit'),
      ]),
    );
    return outcomes.map((outcome) => outcome.result);
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * A group whose batches are all `writes`, sent in one write: the opening, every batch's statements
 * in order, the checkpoints' advance from the expected positions (which raises when one stands
 * elsewhere) and the commit. An error anywhere aborts the transaction, and PostgreSQL then answers
 * the commit by rolling back: the group throws, and nothing of it is kept. Every statement reaches
 * the server or none does: the values are encoded first (as the client's bind would, which could
 * throw and leave a statement out of a transaction that still commits), and a name prepared on this
 * connection with another text (which the client refuses without sending) is refused here, first.
 */
async function sentWhole(client: PoolClient, batches: readonly CheckpointedWork<unknown>[]): Promise<unknown[]> {
  const statements = batches.flatMap((batch) => batch.writes!.statements.map((statement) => sendable(client, statement)));
  const names = batches.map((batch) => batch.name);
  const advance = [names, batches.map((batch) => batch.expected!.toString()), batches.map((batch) => batch.writes!.reached.toString())];
  const answers = await inOneWrite(client, () =>
    Promise.allSettled([
      client.query('begin; set local synchronous_commit = off'),
      client.query({ name: 'projection_group_locks', text: GROUP_LOCKS, values: [names] }),
      ...statements.map((statement) => client.query(statement)),
      client.query({ name: 'projection_group_advance', text: GROUP_ADVANCE, values: advance }),
      client.query('commit'),
    ]),
  );
  const failed = answers.find((answer) => answer.status === 'rejected');
  if (failed) throw failed.reason;
  if ((answers.at(-1) as PromiseFulfilledResult<pg.QueryResult>).value.command !== 'COMMIT') throw new Error('the projection group was rolled back');
  return batches.map((batch) => batch.writes!.result);
}

function sendable(client: PoolClient, statement: Statement): Statement {
  const { connection } = client as unknown as { connection: Record<'parsedStatements' | 'submittedNamedStatements', Record<string, string>> };
  const prepared = statement.name === undefined ? undefined : (connection.parsedStatements[statement.name] ?? connection.submittedNamedStatements[statement.name]);
  if (prepared !== undefined && prepared !== statement.text) throw new Error(`statement ${statement.name} is prepared with another text`);
  return { ...statement, values: statement.values?.map((value) => pgUtils.prepareValue(value)) };
}

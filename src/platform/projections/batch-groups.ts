import type pg from 'pg';
import type { Pool, PoolClient } from '../db/pool.ts';
import { checkpointedBatch, LOCK_CLASS } from './checkpoints.ts';

type Work<T> = (tx: PoolClient, checkpoint: bigint) => Promise<{ save: bigint | null; result: T }>;

interface Member {
  name: string;
  work: Work<unknown>;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

/**
 * Projection batches that arrive in the same turn of the event loop (the shared log reader hands a
 * new batch to every projection at once) applied together: one transaction per group, opened with
 * every member's checkpoint locked and closed by moving them all, so a batch for twelve read models
 * costs their handlers' statements plus two round trips, not twelve transactions. Nobody waits for
 * company: a group leaves at the end of the turn it was formed in. Each member still succeeds or
 * fails on its own: if the group's transaction fails, every member is applied again in a
 * transaction of its own (checkpointedBatch), so only the failing one fails.
 */
export class BatchGroups {
  private queue: Member[] = [];
  private scheduled = false;

  constructor(
    private readonly pool: Pool,
    /** Groups a turn's batches are split into, written side by side (PostgreSQL's cores). */
    private readonly parallelGroups = 2,
  ) {}

  apply<T>(name: string, work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ name, work, resolve: resolve as (result: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const members = this.queue;
    this.queue = [];
    // A projection twice in a turn (two workers of one read model) must not read one checkpoint for both.
    const unique = new Set(members.map((m) => m.name)).size === members.length;
    const count = unique ? Math.min(this.parallelGroups, members.length) : members.length;
    // Dealt out in turn: read models next to each other in the list often handle the same (costly) events.
    for (let group = 0; group < count; group += 1) void this.write(members.filter((_, i) => i % count === group));
  }

  private async write(group: Member[]): Promise<void> {
    if (group.length > 1) {
      const results = await this.writeTogether(group).catch(() => null);
      if (results) return group.forEach((member, i) => member.resolve(results[i]));
    }
    for (const member of group) checkpointedBatch(this.pool, member.name, member.work).then(member.resolve, member.reject);
  }

  /** One transaction for the group: locks in key order (as every group does, so two never wait crosswise). */
  private async writeTogether(group: Member[]): Promise<unknown[]> {
    const client = await this.pool.connect();
    try {
      const names = group.map((m) => client.escapeLiteral(m.name)).join(', ');
      const opened = (await client.query(
        `begin; set local synchronous_commit = off; ` +
          `select pg_advisory_xact_lock(${LOCK_CLASS}, l.key) from (select distinct hashtext(n) as key from unnest(array[${names}]::text[]) n order by 1) l; ` +
          `select name, position from projection_checkpoints where name in (${names})`,
      )) as unknown as pg.QueryResult<{ name: string; position: string }>[];
      const checkpoints = new Map(opened[3]!.rows.map((row) => [row.name, BigInt(row.position)]));
      const outcomes: { save: bigint | null; result: unknown }[] = [];
      for (const member of group) outcomes.push(await member.work(client, checkpoints.get(member.name) ?? 0n));
      const saves = group.flatMap((member, i) => (outcomes[i]!.save === null ? [] : [`(${client.escapeLiteral(member.name)}, ${outcomes[i]!.save})`]));
      await client.query(
        saves.length === 0
          ? 'commit'
          : `update projection_checkpoints c set position = v.position, updated_at = now() from (values ${saves.join(', ')}) v(name, position) where c.name = v.name; commit`,
      );
      return outcomes.map((outcome) => outcome.result);
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

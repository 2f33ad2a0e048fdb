import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import type { Inbox } from './inbox.ts';

/**
 * The Inbox in PostgreSQL: deduplication survives restarts. The inbox row and the effect share one
 * transaction (the effect gets it as `tx`): both commit or neither does. A concurrent duplicate
 * blocks on the uncommitted key, then finds it (skips) or, after a rollback, runs the effect itself.
 */
export class PostgresInbox implements Inbox<PoolClient> {
  constructor(private readonly pool: Pool) {}

  runOnce(groupId: string, eventId: string, effect: (tx: PoolClient) => Promise<void>): Promise<boolean> {
    return withTransaction(this.pool, async (tx) => {
      const { rowCount } = await tx.query('insert into inbox (group_id, event_id) values ($1, $2) on conflict do nothing', [
        groupId,
        eventId,
      ]);
      if (rowCount === 0) return false;
      await effect(tx);
      return true;
    });
  }

  /**
   * Of `eventIds`, those the group has not applied yet: a read, for an effect that must start before
   * its transaction (runOnceEach then records them, and answers which are still new).
   */
  async unapplied(groupId: string, eventIds: readonly string[]): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ id: string }>(
      'select id from unnest($2::text[]) as ids (id) where not exists (select 1 from inbox where group_id = $1 and event_id = ids.id)',
      [groupId, [...new Set(eventIds)]],
    );
    return new Set(rows.map((row) => row.id));
  }

  /**
   * runOnce for a whole batch in one transaction (one round trip for the inbox, however many
   * events): records the events the group has not applied yet and runs `effect` with their ids.
   * Ids are inserted in sorted order, so two deliveries of overlapping batches wait for each other
   * instead of deadlocking. Resolves the number of events applied now.
   */
  runOnceEach(groupId: string, eventIds: readonly string[], effect: (fresh: ReadonlySet<string>, tx: PoolClient) => Promise<void>): Promise<number> {
    return withTransaction(this.pool, async (tx) => {
      const { rows } = await tx.query<{ event_id: string }>(
        `insert into inbox (group_id, event_id) select $1, id from unnest($2::text[]) as ids (id) order by id
         on conflict do nothing returning event_id`,
        [groupId, [...new Set(eventIds)]],
      );
      const fresh = new Set(rows.map((row) => row.event_id));
      if (fresh.size > 0) await effect(fresh, tx);
      return fresh.size;
    });
  }
}

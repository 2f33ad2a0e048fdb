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
}

import type { Pool } from '../../../platform/db/pool.ts';
import type { RelationTuple } from '../tuple.ts';
import { rowToTuple, TUPLE_COLUMNS, type TupleRow } from '../tuples/rows.ts';
import { FGA_HISTORY_PROJECTION } from './tuple-history.ts';

const FETCH_SIZE = 10_000;

/**
 * Streams every tuple of a tenant from the read model to `onTuple` and answers the global position
 * those rows reflect: the fga-history projection's checkpoint (fga_tuples is the view of its open
 * lifetimes, migration 0030), read in the same snapshot (rows and checkpoint are committed together). A cursor keeps memory flat however many tuples the tenant has. Each row
 * brings fresh strings, while an id recurs in many tuples: equal ids are handed out as one string,
 * which takes about a third off an index built from them.
 */
export async function readTupleSnapshot(pool: Pool, tenant: string, onTuple: (tuple: RelationTuple) => void): Promise<bigint> {
  const ids = new Map<string, string>();
  const shared = (id: string): string => {
    const known = ids.get(id);
    if (known !== undefined) return known;
    ids.set(id, id);
    return id;
  };
  const client = await pool.connect();
  try {
    await client.query('begin isolation level repeatable read read only');
    const { rows } = await client.query<{ position: string }>('select position from projection_checkpoints where name = $1', [FGA_HISTORY_PROJECTION]);
    await client.query(
      `declare tuples no scroll cursor for select ${TUPLE_COLUMNS} from fga_tuples where tenant_id = $1`,
      [tenant],
    );
    for (;;) {
      const batch = await client.query<TupleRow>(`fetch ${FETCH_SIZE} from tuples`);
      for (const row of batch.rows) {
        const tuple = rowToTuple(row);
        onTuple({ ...tuple, objectId: shared(tuple.objectId), subjectId: shared(tuple.subjectId) });
      }
      if (batch.rows.length < FETCH_SIZE) break;
    }
    await client.query('commit');
    return BigInt(rows[0]?.position ?? 0);
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

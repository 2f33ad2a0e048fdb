import type { Pool } from '../../../platform/db/pool.ts';
import type { RecordedEvent } from '../../../platform/eventstore/port.ts';
import type { MemoryTupleStore } from '../engine/memory-tuple-store.ts';
import type { ObjectIdsQuery, SubjectIdsQuery, TupleReader } from '../engine/tuple-reader.ts';
import { tupleToString, type RelationTuple } from '../tuple.ts';
import type { FgaTupleEvent } from '../tuples/events.ts';
import { rowToTuple, TUPLE_COLUMNS, type TupleRow } from '../tuples/rows.ts';
import { FGA_HISTORY_PROJECTION } from './tuple-history.ts';

/** The tuples whose standing at an instant differs from the live index's, with their standing then. */
export type TupleOverlay = Map<string, { tuple: RelationTuple; stood: boolean }>;

/**
 * The lifetimes of fga_tuple_history that changed after `at` (written or deleted after it), folded
 * per tuple into whether it stood at `at`, and the log position the rows reflect (the projection's
 * checkpoint, read in the same statement: rows and checkpoint are committed together). Null when
 * more than `limit` lifetimes changed since: the overlay would cost more than the history lookups.
 * A tuple untouched since `at` stands then exactly as it stood at the checkpoint.
 */
export async function changesSince(pool: Pool, tenant: string, at: Date, limit: number): Promise<{ overlay: TupleOverlay; checkpoint: bigint } | null> {
  // Counted first on the index alone: an old instant gives up after `limit` index entries, not rows.
  const { rows } = await pool.query<Partial<TupleRow> & { stood: boolean | null; checkpoint: string; too_many: boolean }>(
    `with changed as (
       select count(*) > $3 as too_many from (
         select 1 from fga_tuple_history where tenant_id = $1 and coalesce(deleted_at, written_at) > $2 limit $3 + 1) s)
     select c.position as checkpoint, (select too_many from changed), h.*
       from projection_checkpoints c
       left join lateral (
         select ${TUPLE_COLUMNS}, written_at <= $2 as stood from fga_tuple_history
          where tenant_id = $1 and coalesce(deleted_at, written_at) > $2 and not (select too_many from changed)) h on true
      where c.name = $4`,
    [tenant, at.toISOString(), limit, FGA_HISTORY_PROJECTION],
  );
  if (rows[0]?.too_many) return null;
  const overlay: TupleOverlay = new Map();
  for (const row of rows) {
    if (row.stood === null) continue; // the checkpoint alone: nothing changed since
    const tuple = rowToTuple(row as TupleRow);
    const key = tupleToString(tuple);
    // Lifetimes of one tuple never overlap: it stood if one of them covered the instant.
    overlay.set(key, { tuple, stood: row.stood || (overlay.get(key)?.stood ?? false) });
  }
  return { overlay, checkpoint: BigInt(rows[0]?.checkpoint ?? 0) };
}

/**
 * Adds to `overlay` the tenant's tuple events the log holds past the history's checkpoint (in log
 * order), which the live index may already have applied. A tuple's standing at `at` is then its
 * last event at or before `at` if it has one there; otherwise what the history said, or, for a
 * tuple the history saw unchanged since `at`, the opposite of what its first such event did (a
 * tuple is deleted only while it stands and written only while it does not).
 */
export function foldLogTail(overlay: TupleOverlay, events: RecordedEvent[], at: Date): void {
  const atMs = at.getTime();
  const settled = new Set<string>();
  for (const event of events) {
    const { type, data } = event as unknown as FgaTupleEvent;
    const key = tupleToString(data.tuple);
    const written = type === 'FgaTupleWritten';
    if (Date.parse(event.metadata.occurredAt) <= atMs) {
      overlay.set(key, { tuple: data.tuple, stood: written });
      settled.add(key);
    } else if (!settled.has(key) && !overlay.has(key)) {
      overlay.set(key, { tuple: data.tuple, stood: !written });
      settled.add(key);
    }
  }
}

/** Thrown by a lookup once the live index applied events the overlay does not account for. */
export class IndexMovedOn extends Error {
  constructor() {
    super('the live tuple index moved past the overlay');
  }
}

const subjectsKey = (q: SubjectIdsQuery): string => `${q.objectType}:${q.objectId}#${q.relation}@${q.subjectType}#${q.subjectRelation ?? ''}`;
const objectsKey = (q: ObjectIdsQuery): string => `${q.subjectType}:${q.subjectId}#${q.subjectRelation ?? ''}>${q.objectType}#${q.relation}`;

function withChanges(base: Iterable<string>, changes: Map<string, boolean> | undefined): Iterable<string> {
  if (!changes) return base;
  const ids = new Set(base);
  for (const [id, stood] of changes) {
    if (stood) ids.add(id);
    else ids.delete(id);
  }
  return ids;
}

/**
 * The tuples as they stood at an instant, answered from the live in-memory index corrected by an
 * overlay of the tuples changed since: synchronous lookups, as fast as the live engine's. Valid
 * while the index holds no event the overlay was not built with (its position at most `validUpTo`):
 * each lookup checks, and throws IndexMovedOn otherwise.
 */
export class OverlayTupleReader implements TupleReader {
  private readonly subjects = new Map<string, Map<string, boolean>>();
  private readonly objects = new Map<string, Map<string, boolean>>();

  constructor(
    private readonly index: MemoryTupleStore,
    overlay: TupleOverlay,
    private readonly indexPosition: () => bigint,
    private readonly validUpTo: bigint,
  ) {
    const put = (byKey: Map<string, Map<string, boolean>>, key: string, id: string, stood: boolean) => {
      const changes = byKey.get(key) ?? new Map<string, boolean>();
      changes.set(id, stood);
      byKey.set(key, changes);
    };
    for (const { tuple, stood } of overlay.values()) {
      put(this.subjects, subjectsKey(tuple), tuple.subjectId, stood);
      put(this.objects, objectsKey(tuple), tuple.objectId, stood);
    }
  }

  private current(): void {
    if (this.indexPosition() > this.validUpTo) throw new IndexMovedOn();
  }

  readSubjectIds(query: SubjectIdsQuery): Iterable<string> {
    this.current();
    return withChanges(this.index.readSubjectIds(query), this.subjects.get(subjectsKey(query)));
  }

  readObjectIds(query: ObjectIdsQuery): Iterable<string> {
    this.current();
    return withChanges(this.index.readObjectIds(query), this.objects.get(objectsKey(query)));
  }

  hasTuple(tuple: RelationTuple): boolean {
    this.current();
    return this.subjects.get(subjectsKey(tuple))?.get(tuple.subjectId) ?? this.index.hasTuple(tuple);
  }
}

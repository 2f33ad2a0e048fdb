import type { Pool } from '../../../platform/db/pool.ts';
import type { RecordedEvent } from '../../../platform/eventstore/port.ts';
import type { MemoryTupleStore } from '../engine/memory-tuple-store.ts';
import type { ObjectIdsQuery, SubjectIdsQuery, TupleReader } from '../engine/tuple-reader.ts';
import { tupleToString, type RelationTuple } from '../tuple.ts';
import { tupleChangesOf } from '../tuples/events.ts';
import { rowToTuple, TUPLE_COLUMNS, type TupleRow } from '../tuples/rows.ts';
import { FGA_HISTORY_PROJECTION } from './tuple-history.ts';

/** The tuples whose standing at an instant differs from the live index's, with their standing then. */
export type TupleOverlay = Map<string, { tuple: RelationTuple; stood: boolean }>;

/** One lifetime of a tuple that changed (was written or deleted) after some instant. */
interface ChangedLifetime {
  key: string;
  tuple: RelationTuple;
  writtenAt: number;
  /** Its deletion, else its write (ms). */
  changedAt: number;
}

/** A tenant's lifetimes changed after `since`, as the history held them at `checkpoint`, latest change first. */
interface RecentLifetimes {
  since: number;
  checkpoint: bigint;
  lifetimes: ChangedLifetime[];
}

/** Tenants whose recent lifetimes are kept (the least recently loaded go first). */
const CACHED_TENANTS = 64;

/**
 * The tuples whose standing at a recent instant differs from the history's latest: read once per
 * tenant from fga_tuple_history (the lifetimes changed after the instant asked, with the
 * projection's checkpoint read in the same statement: rows and checkpoint are committed together)
 * and kept, so a later instant is answered from memory. What the history applied since is not
 * re-read: the caller folds the log past `checkpoint` (foldLogTail), and calls `forget` when that
 * tail grows long. Null when more than `limit` lifetimes changed since the instant: the overlay
 * would cost more than the history lookups.
 */
export class RecentTupleChanges {
  private readonly tenants = new Map<string, RecentLifetimes>();
  /** Per tenant, the latest instant found with too many changes since: every earlier one has more. */
  private readonly crowdedUpTo = new Map<string, number>();

  constructor(
    private readonly pool: Pool,
    private readonly limit: number,
  ) {}

  async since(tenant: string, at: Date): Promise<{ overlay: TupleOverlay; checkpoint: bigint } | null> {
    const atMs = at.getTime();
    if (atMs <= (this.crowdedUpTo.get(tenant) ?? Number.NEGATIVE_INFINITY)) return null;
    let recent = this.tenants.get(tenant);
    if (!recent || atMs < recent.since) {
      const loaded = await this.load(tenant, at);
      if (!loaded) {
        this.crowdedUpTo.set(tenant, Math.max(atMs, this.crowdedUpTo.get(tenant) ?? Number.NEGATIVE_INFINITY));
        return null;
      }
      recent = loaded;
      this.tenants.delete(tenant);
      this.tenants.set(tenant, recent);
      if (this.tenants.size > CACHED_TENANTS) this.tenants.delete(this.tenants.keys().next().value!);
    }
    const overlay: TupleOverlay = new Map();
    for (const { key, tuple, writtenAt, changedAt } of recent.lifetimes) {
      if (changedAt <= atMs) break;
      // Lifetimes of one tuple never overlap: it stood if one of them covered the instant.
      overlay.set(key, { tuple, stood: writtenAt <= atMs || (overlay.get(key)?.stood ?? false) });
    }
    return { overlay, checkpoint: recent.checkpoint };
  }

  /** Drops a tenant's lifetimes: the next instant reads them again at the history's newest checkpoint. */
  forget(tenant: string): void {
    this.tenants.delete(tenant);
  }

  private async load(tenant: string, at: Date): Promise<RecentLifetimes | null> {
    // Counted first on the index alone: an old instant gives up after `limit` index entries, not rows.
    const { rows } = await this.pool.query<Partial<TupleRow> & { written_at: Date | null; changed_at: Date | null; checkpoint: string; too_many: boolean }>(
      `with changed as (
         select count(*) > $3 as too_many from (
           select 1 from fga_tuple_history where tenant_id = $1 and coalesce(deleted_at, written_at) > $2 limit $3 + 1) s)
       select c.position as checkpoint, (select too_many from changed), h.*
         from projection_checkpoints c
         left join lateral (
           select ${TUPLE_COLUMNS}, written_at, coalesce(deleted_at, written_at) as changed_at from fga_tuple_history
            where tenant_id = $1 and coalesce(deleted_at, written_at) > $2 and not (select too_many from changed)
            order by coalesce(deleted_at, written_at) desc) h on true
        where c.name = $4`,
      [tenant, at.toISOString(), this.limit, FGA_HISTORY_PROJECTION],
    );
    if (rows[0]?.too_many) return null;
    const lifetimes = rows
      .filter((row) => row.changed_at !== null) // the checkpoint alone: nothing changed since
      .map((row) => {
        const tuple = rowToTuple(row as TupleRow);
        return { key: tupleToString(tuple), tuple, writtenAt: row.written_at!.getTime(), changedAt: row.changed_at!.getTime() };
      });
    return { since: at.getTime(), checkpoint: BigInt(rows[0]?.checkpoint ?? 0), lifetimes };
  }
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
    const before = Date.parse(event.metadata.occurredAt) <= atMs;
    for (const { tuple, written } of tupleChangesOf(event)) {
      const key = tupleToString(tuple);
      if (before) {
        overlay.set(key, { tuple, stood: written });
        settled.add(key);
      } else if (!settled.has(key) && !overlay.has(key)) {
        overlay.set(key, { tuple, stood: !written });
        settled.add(key);
      }
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

import type { Queryable } from '../../platform/db/pool.ts';
import type { AuditEntry } from './entry.ts';
import { CHUNK_MAX_SPAN_MS, entriesOfChunk, type ChunkRow } from './permission-check-chunks.ts';

export type ListedEntry = Omit<AuditEntry, 'tenantId'>;

export interface ChunkFilter {
  userId?: string | undefined;
  /** Inclusive bounds. */
  from?: Date | undefined;
  to?: Date | undefined;
}

/** Newest first, then the greater id first: audit_log's order (created_at desc, id desc). */
export const newestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

/** The chunks that may hold matching entries, and whether all of a chunk's entries lie in the time range. */
function chunkConditions(tenant: string, filter: ChunkFilter): { where: string; inside: string; params: unknown[] } {
  const params: unknown[] = [tenant];
  const where = ['tenant_id = $1'];
  const inside: string[] = [];
  const param = (value: unknown) => (params.push(value), `$${params.length}`);
  if (filter.userId !== undefined) where.push(`user_id = ${param(filter.userId)}`);
  if (filter.from) {
    const from = param(filter.from);
    where.push(`last_created_at >= ${from}`);
    inside.push(`first_created_at >= ${from}`);
  }
  if (filter.to) {
    // Inclusive to the millisecond: everything before the next millisecond. A chunk spans at most
    // CHUNK_MAX_SPAN_MS, so the chunks reaching back before the bound end within that much after it.
    const before = param(new Date(filter.to.getTime() + 1));
    where.push(`first_created_at < ${before}`, `last_created_at < ${param(new Date(filter.to.getTime() + 1 + CHUNK_MAX_SPAN_MS))}`);
    inside.push(`last_created_at < ${before}`);
  }
  return { where: where.join(' and '), inside: inside.length > 0 ? inside.join(' and ') : 'true', params };
}

const inRange = (filter: ChunkFilter) => {
  const from = filter.from?.toISOString();
  const to = filter.to?.toISOString();
  return (entry: ListedEntry) => (from === undefined || entry.createdAt >= from) && (to === undefined || entry.createdAt <= to);
};

/**
 * The PERMISSION_CHECK entries stored in chunks (migration 0029) that a listing needs: among the
 * entries matching `filter`, at least the `wanted` newest ones (newest first), and how many match,
 * counted up to `cap`. `olderBound`: the listing already has `wanted` entries at least this new
 * elsewhere, so chunks ending before it cannot reach its page.
 *
 * The newest chunks lying wholly in the range that together hold `wanted` entries start no earlier
 * than some instant F, so the `wanted` newest entries are all at least as new as F: only chunks
 * ending at F or later are read and expanded (one index range). F comes from an index-only walk
 * of at most `wanted` chunk headers; the count from one of at most `cap`.
 */
export async function permissionChecksFor(
  db: Queryable,
  tenant: string,
  filter: ChunkFilter,
  wanted: number,
  olderBound: string | null,
  cap: number,
): Promise<{ entries: ListedEntry[]; count: number; countCapped: boolean }> {
  const { where, inside, params } = chunkConditions(tenant, filter);
  const newest = 'order by last_created_at desc, chunk_id desc';
  const [window, counted] = await Promise.all([
    db.query<{ start: Date | null; held: number }>(
      `select min(first_created_at) filter (where newer < ${wanted}) as start, coalesce(sum(entry_count), 0)::int as held
         from (select first_created_at, entry_count, sum(entry_count) over (${newest}) - entry_count as newer
                 from audit_permission_checks where ${where} and ${inside} ${newest} limit ${wanted}) as chunks`,
      params,
    ),
    db.query<{ inside: number; chunks: number; partial: string[] }>(
      `select coalesce(sum(entry_count) filter (where inside), 0)::int as inside, count(*)::int as chunks,
              coalesce(array_agg(chunk_id) filter (where not inside), '{}') as partial
         from (select chunk_id, entry_count, ${inside} as inside from audit_permission_checks where ${where} ${newest} limit ${cap}) as matching`,
      params,
    ),
  ]);
  const held = window.rows[0]!;
  const start = held.held >= wanted ? held.start!.toISOString() : null;
  const bound = start !== null && (olderBound === null || start > olderBound) ? start : olderBound;
  const count = counted.rows[0]!;
  const partial = new Set(count.partial);
  const columns = 'chunk_id, user_id, client_ip, user_agent, entries';
  // The chunks that may reach the page (one index range), and those the count could not take whole.
  const [reaching, counting] = await Promise.all([
    db.query<ChunkRow>(
      `select ${columns} from audit_permission_checks where ${where}${bound === null ? '' : ` and last_created_at >= $${params.length + 1}`}`,
      bound === null ? params : [...params, bound],
    ),
    partial.size === 0
      ? { rows: [] }
      : db.query<ChunkRow>(`select ${columns} from audit_permission_checks where tenant_id = $1 and chunk_id = any($2::uuid[])`, [tenant, [...partial]]),
  ]);
  const matches = inRange(filter);
  const entries = reaching.rows.flatMap((chunk) => entriesOfChunk(chunk).filter(matches));
  const partialMatches = counting.rows.reduce((n, chunk) => n + entriesOfChunk(chunk).filter(matches).length, 0);
  return { entries: entries.sort(newestFirst), count: count.inside + partialMatches, countCapped: count.chunks === cap };
}

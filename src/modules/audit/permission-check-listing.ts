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

interface ChunkHeader {
  chunk_id: string;
  first_created_at: Date;
  last_created_at: Date;
  entry_count: number;
  inside: boolean;
}

/** Newest first, then the greater id first: audit_log's order (created_at desc, id desc). */
export const newestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

const FIRST_PAGE = 64;
const LARGEST_PAGE = 4_000;

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
 * The PERMISSION_CHECK entries stored in chunks (migration 0028) that a listing needs: among the
 * entries matching `filter`, at least the `wanted` newest ones (newest first), and how many match,
 * counted up to `cap`. `olderBound`: the listing already has `wanted` entries at least this new
 * elsewhere, so chunks ending before it cannot reach its page.
 *
 * Chunks are walked newest end first; once the chunks lying wholly in the range hold `wanted`
 * entries, none of them older than F (their oldest start), the `wanted` newest entries are all at
 * least as new as F: the walk stops at the first chunk ending before F, and only the chunks it
 * passed are read and expanded.
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
  const headers = (extra: string, extraParams: unknown[], limit: number) =>
    db.query<ChunkHeader>(
      `select chunk_id, first_created_at, last_created_at, entry_count, ${inside} as inside from audit_permission_checks
        where ${where}${extra} order by last_created_at desc, chunk_id desc limit ${limit}`,
      [...params, ...extraParams],
    );
  const counting = db.query<{ inside: number; chunks: number; partial: string[] }>(
    `select coalesce(sum(entry_count) filter (where inside), 0)::int as inside, count(*)::int as chunks,
            coalesce(array_agg(chunk_id) filter (where not inside), '{}') as partial
       from (select chunk_id, entry_count, ${inside} as inside from audit_permission_checks where ${where}
              order by last_created_at desc, chunk_id desc limit ${cap}) as matching`,
    params,
  );

  let bound = olderBound;
  let counted = 0;
  let oldestCountedStart: string | null = null;
  const selected: string[] = [];
  let page = FIRST_PAGE;
  let after: ChunkHeader | null = null;
  walk: for (;;) {
    const keyset: [string, unknown[]] = after ? [` and (last_created_at, chunk_id) < ($${params.length + 1}, $${params.length + 2})`, [after.last_created_at, after.chunk_id]] : ['', []];
    const { rows } = await headers(keyset[0], keyset[1], page);
    for (const header of rows) {
      const last = header.last_created_at.toISOString();
      if (bound !== null && last < bound) break walk;
      selected.push(header.chunk_id);
      if (header.inside && counted < wanted) {
        counted += header.entry_count;
        const first = header.first_created_at.toISOString();
        if (oldestCountedStart === null || first < oldestCountedStart) oldestCountedStart = first;
        if (counted >= wanted && (bound === null || oldestCountedStart > bound)) bound = oldestCountedStart;
      }
    }
    if (rows.length < page) break;
    after = rows[rows.length - 1]!;
    page = Math.min(page * 4, LARGEST_PAGE);
  }

  const count = (await counting).rows[0]!;
  const partial = new Set(count.partial);
  const { rows: chunks } = await db.query<ChunkRow & { chunk_id: string }>(
    'select chunk_id, user_id, client_ip, user_agent, entries from audit_permission_checks where tenant_id = $1 and chunk_id = any($2::uuid[])',
    [tenant, [...new Set([...selected, ...partial])]],
  );
  const matches = inRange(filter);
  const chosen = new Set(selected);
  const entries: ListedEntry[] = [];
  let partialMatches = 0;
  for (const chunk of chunks) {
    const matching = entriesOfChunk(chunk).filter(matches);
    if (partial.has(chunk.chunk_id)) partialMatches += matching.length;
    if (chosen.has(chunk.chunk_id)) entries.push(...matching);
  }
  return { entries: entries.sort(newestFirst), count: count.inside + partialMatches, countCapped: count.chunks === cap };
}

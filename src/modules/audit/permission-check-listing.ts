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
 * The entries newer than `before` that a listing may skip whole: how many match `filter` among the
 * chunks ending after it. A chunk lying wholly after `before` and wholly in the filter counts by
 * its header (index-only); the few others (cut by `before` or by the time range) are expanded.
 */
async function matchingAfter(db: Queryable, tenant: string, filter: ChunkFilter, before: Date): Promise<number> {
  const { where, inside, params } = chunkConditions(tenant, filter);
  const after = `$${params.length + 1}`;
  const { rows } = await db.query<{ whole: number; cut: string[] }>(
    `select coalesce(sum(entry_count) filter (where whole), 0)::int as whole, coalesce(array_agg(chunk_id) filter (where not whole), '{}') as cut
       from (select chunk_id, entry_count, first_created_at > ${after} and ${inside} as whole
               from audit_permission_checks where ${where} and last_created_at > ${after}) as newer`,
    [...params, before],
  );
  const { whole, cut } = rows[0]!;
  if (cut.length === 0) return whole;
  // `before` is a matching chunk's end, so at least as new as filter.from.
  const matches = inRange({ ...filter, from: new Date(before.getTime() + 1) });
  const expanded = await db.query<ChunkRow>(`select ${CHUNK_COLUMNS} from audit_permission_checks where tenant_id = $1 and chunk_id = any($2::uuid[])`, [tenant, cut]);
  return whole + expanded.rows.reduce((n, chunk) => n + entriesOfChunk(chunk).filter(matches).length, 0);
}

/**
 * Where a deep offset lands without reading the entries before it: the oldest instant T (a chunk's
 * end) such that the entries newer than T, audit_log's (`logged`, its newest keys, newest first)
 * and the chunks' (at most the entry counts of the chunks ending after T, an index-only walk of at
 * most offset + 1 headers), are at most `offset`. Every entry newer than T then precedes the page,
 * so the listing continues from T with `offset` less the exact number newer than T. Null when no
 * chunk end qualifies.
 */
async function skippableInstant(db: Queryable, tenant: string, filter: ChunkFilter, offset: number, logged: readonly string[]): Promise<Date | null> {
  const { where, params } = chunkConditions(tenant, filter);
  const newest = 'order by last_created_at desc, chunk_id desc';
  // Headers newer than `offset - logged.length` entries qualify whatever audit_log holds: only the
  // oldest of them and those after it are sent (as epoch milliseconds: no Date parsing per row).
  const sure = Math.max(0, offset - logged.length);
  const { rows } = await db.query<{ last: number; newer: number }>(
    `with headers as (select last_created_at, sum(entry_count) over (${newest} rows unbounded preceding) - entry_count as newer
                        from audit_permission_checks where ${where} ${newest} limit ${offset + 1})
     select extract(epoch from last_created_at) * 1000 as last, newer::int from headers
      where newer <= ${offset} and newer >= (select coalesce(max(newer), 0) from headers where newer <= ${sure}) order by newer`,
    params,
  );
  let skippable: Date | null = null;
  let loggedNewer = 0;
  for (const header of rows) {
    const instant = new Date(Number(header.last)).toISOString();
    while (loggedNewer < logged.length && logged[loggedNewer]! > instant) loggedNewer++;
    if (header.newer + loggedNewer > offset) break;
    skippable = new Date(Number(header.last));
  }
  return skippable;
}

const CHUNK_COLUMNS = 'chunk_id, user_id, client_ip, user_agent, entries';

/**
 * The PERMISSION_CHECK entries stored in chunks (migration 0029) that a listing's page may hold:
 * `entries` (newest first) are all the matching ones at most as new as some instant, and
 * `preceding` counts the matching entries newer than it, of both tables: `loggedPreceding` of
 * audit_log's keys, the rest chunk entries counted from headers, not expanded. The page starts
 * `offset - preceding` into the merge of `entries` and `logged.slice(loggedPreceding)`.
 * `logged`: audit_log's newest offset + limit matching keys' createdAt, newest first.
 */
export async function permissionCheckPage(
  db: Queryable,
  tenant: string,
  filter: ChunkFilter,
  offset: number,
  limit: number,
  logged: readonly string[],
): Promise<{ entries: ListedEntry[]; preceding: number; loggedPreceding: number }> {
  // Shallow pages read few chunks anyway: the skip's two index-only walks would cost more.
  const instant = offset > limit ? await skippableInstant(db, tenant, filter, offset, logged) : null;
  const notAfter = instant?.toISOString();
  const loggedPreceding = notAfter === undefined ? 0 : logged.filter((createdAt) => createdAt > notAfter).length;
  const preceding = instant === null ? 0 : loggedPreceding + (await matchingAfter(db, tenant, filter, instant));
  const wanted = offset + limit - preceding;
  // audit_log already holds `wanted` entries at least this new after the skipped ones.
  const olderBound = logged[loggedPreceding + wanted - 1] ?? null;
  const region = instant === null || (filter.to && filter.to < instant) ? filter : { ...filter, to: instant };
  return { entries: await newestMatching(db, tenant, region, wanted, olderBound), preceding, loggedPreceding };
}

/**
 * Among the chunk entries matching `filter`, at least the `wanted` newest ones (newest first).
 * `olderBound`: the listing already has `wanted` entries at least this new elsewhere, so chunks
 * ending before it cannot reach its page.
 *
 * The newest chunks lying wholly in the range that together hold `wanted` entries start no earlier
 * than some instant F, so the `wanted` newest entries are all at least as new as F: only chunks
 * ending at F or later are read and expanded (one index range). F comes from an index-only walk
 * of at most `wanted` chunk headers.
 */
async function newestMatching(db: Queryable, tenant: string, filter: ChunkFilter, wanted: number, olderBound: string | null): Promise<ListedEntry[]> {
  const { where, inside, params } = chunkConditions(tenant, filter);
  const newest = 'order by last_created_at desc, chunk_id desc';
  const window = await db.query<{ start: Date | null; held: number }>(
    `select min(first_created_at) filter (where newer < ${wanted}) as start, coalesce(sum(entry_count), 0)::int as held
       from (select first_created_at, entry_count, sum(entry_count) over (${newest} rows unbounded preceding) - entry_count as newer
               from audit_permission_checks where ${where} and ${inside} ${newest} limit ${wanted}) as chunks`,
    params,
  );
  const held = window.rows[0]!;
  const start = held.held >= wanted ? held.start!.toISOString() : null;
  const bound = start !== null && (olderBound === null || start > olderBound) ? start : olderBound;
  const reaching = await db.query<ChunkRow>(
    `select ${CHUNK_COLUMNS} from audit_permission_checks where ${where}${bound === null ? '' : ` and last_created_at >= $${params.length + 1}`}`,
    bound === null ? params : [...params, bound],
  );
  const matches = inRange(filter);
  return reaching.rows.flatMap((chunk) => entriesOfChunk(chunk).filter(matches)).sort(newestFirst);
}

/**
 * How many chunk entries match `filter`, counted up to `cap` chunk headers (index-only; each holds
 * at least one entry), expanding only the chunks the time range cuts through.
 */
export async function permissionCheckCount(db: Queryable, tenant: string, filter: ChunkFilter, cap: number): Promise<{ count: number; countCapped: boolean }> {
  const { where, inside, params } = chunkConditions(tenant, filter);
  const counted = await db.query<{ inside: number; chunks: number; partial: string[] }>(
    `select coalesce(sum(entry_count) filter (where inside), 0)::int as inside, count(*)::int as chunks,
            coalesce(array_agg(chunk_id) filter (where not inside), '{}') as partial
       from (select chunk_id, entry_count, ${inside} as inside from audit_permission_checks where ${where} order by last_created_at desc, chunk_id desc limit ${cap}) as matching`,
    params,
  );
  const count = counted.rows[0]!;
  const partial = count.partial.length === 0 ? { rows: [] } : await db.query<ChunkRow>(`select ${CHUNK_COLUMNS} from audit_permission_checks where tenant_id = $1 and chunk_id = any($2::uuid[])`, [tenant, count.partial]);
  const matches = inRange(filter);
  const partialMatches = partial.rows.reduce((n, chunk) => n + entriesOfChunk(chunk).filter(matches).length, 0);
  return { count: count.inside + partialMatches, countCapped: count.chunks === cap };
}

import type { Queryable } from '../../platform/db/pool.ts';
import type { AuditEntry } from './entry.ts';
import { PERMISSION_CHECK } from './vocabulary.ts';

/**
 * PERMISSION_CHECK entries are stored a chunk per row (migration 0029): the entries of one flushed
 * batch that share tenant, user, client IP and user agent, spanning at most this long (the table's
 * check constraint says the same), so a listing's time bound cuts through few chunks.
 */
export const CHUNK_MAX_SPAN_MS = 60_000;

/** An entry's own fields in a chunk, in this order. */
type StoredEntry = [id: string, createdAt: string, status: AuditEntry['status'], errorCode: string | null, errorMessage: string | null, metadata: AuditEntry['metadata']];

export interface PermissionCheckChunk {
  tenantId: string;
  chunkId: string;
  userId: string | null;
  clientIp: string | null;
  userAgent: string | null;
  firstCreatedAt: string;
  lastCreatedAt: string;
  entries: StoredEntry[];
}

/**
 * The chunks of a batch, entries in batch order. `newChunkId` is called once per chunk: the caller
 * keeps the chunks (and their ids) until they are written, so a retried INSERT never duplicates.
 * Every check of the service passes through here: the grouping key is built by concatenation and
 * each entry's time parsed once (a JSON key and two Date.parse an entry cost as much as the rest).
 */
export function chunksOf(entries: readonly AuditEntry[], newChunkId: () => string): PermissionCheckChunk[] {
  const open = new Map<string, { chunk: PermissionCheckChunk; firstMs: number; lastMs: number }>();
  const chunks: PermissionCheckChunk[] = [];
  // A batch is mostly runs of one caller's checks within a millisecond: an entry like the one before
  // reuses its key and its time instead of building and parsing them again.
  let previous: AuditEntry | undefined;
  let key = '';
  let ms = 0;
  for (const e of entries) {
    if (!previous || !sameCaller(e, previous)) key = groupKey(e);
    if (e.createdAt !== previous?.createdAt) ms = Date.parse(e.createdAt);
    previous = e;
    let group = open.get(key);
    if (group && Math.max(group.lastMs, ms) - Math.min(group.firstMs, ms) <= CHUNK_MAX_SPAN_MS) {
      if (ms < group.firstMs) {
        group.firstMs = ms;
        group.chunk.firstCreatedAt = e.createdAt;
      }
      if (ms > group.lastMs) {
        group.lastMs = ms;
        group.chunk.lastCreatedAt = e.createdAt;
      }
    } else {
      const chunk = { tenantId: e.tenantId, chunkId: newChunkId(), userId: e.userId, clientIp: e.clientIp, userAgent: e.userAgent, firstCreatedAt: e.createdAt, lastCreatedAt: e.createdAt, entries: [] };
      group = { chunk, firstMs: ms, lastMs: ms };
      open.set(key, group);
      chunks.push(chunk);
    }
    group.chunk.entries.push([e.id, e.createdAt, e.status, e.errorCode, e.errorMessage, e.metadata]);
  }
  return chunks;
}

/** Tenant, user, client IP and user agent, unambiguously: each value after its length (null as -). */
const part = (value: string | null) => (value === null ? '-|' : `${value.length}|${value}`);
const groupKey = (e: AuditEntry) => part(e.tenantId) + part(e.userId) + part(e.clientIp) + part(e.userAgent);
const sameCaller = (e: AuditEntry, other: AuditEntry) => e.tenantId === other.tenantId && e.userId === other.userId && e.clientIp === other.clientIp && e.userAgent === other.userAgent;

/**
 * Appends chunks in one statement over one array per column; a chunk id already there is left as it
 * is (a retried batch). The entries go as one JSON array of each chunk's entries, not as a text[]:
 * pg would escape every quote of every entry's JSON into the array literal (as long as writing the
 * JSON itself). `json` (not jsonb) keeps each element's text as written, so a chunk's stored text is
 * JSON.stringify of its entries exactly.
 */
export async function insertPermissionCheckChunks(db: Queryable, chunks: readonly PermissionCheckChunk[]): Promise<void> {
  if (chunks.length === 0) return;
  await db.query(
    `insert into audit_permission_checks (tenant_id, chunk_id, user_id, client_ip, user_agent, first_created_at, last_created_at, entry_count, entries)
     select c.tenant_id, c.chunk_id, c.user_id, c.client_ip, c.user_agent, c.first_created_at, c.last_created_at, c.entry_count, e.entries::text
       from unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::int[])
              with ordinality as c(tenant_id, chunk_id, user_id, client_ip, user_agent, first_created_at, last_created_at, entry_count, n)
       join json_array_elements($9::json) with ordinality as e(entries, n) using (n)
     on conflict (tenant_id, chunk_id) do nothing`,
    [
      chunks.map((c) => c.tenantId),
      chunks.map((c) => c.chunkId),
      chunks.map((c) => c.userId),
      chunks.map((c) => c.clientIp),
      chunks.map((c) => c.userAgent),
      chunks.map((c) => c.firstCreatedAt),
      chunks.map((c) => c.lastCreatedAt),
      chunks.map((c) => c.entries.length),
      JSON.stringify(chunks.map((c) => c.entries)),
    ],
  );
}

/** A stored chunk row, as the listing reads it. */
export interface ChunkRow {
  user_id: string | null;
  client_ip: string | null;
  user_agent: string | null;
  entries: string;
}

/** The entries of a chunk row, as the audit log lists them (tenant left out). */
export function entriesOfChunk(row: ChunkRow): Omit<AuditEntry, 'tenantId'>[] {
  return (JSON.parse(row.entries) as StoredEntry[]).map(([id, createdAt, status, errorCode, errorMessage, metadata]) => ({
    id,
    action: PERMISSION_CHECK,
    userId: row.user_id,
    resource: null,
    resourceId: null,
    status,
    errorCode,
    errorMessage,
    clientIp: row.client_ip,
    userAgent: row.user_agent,
    metadata,
    createdAt,
  }));
}

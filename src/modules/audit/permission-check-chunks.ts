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
 */
export function chunksOf(entries: readonly AuditEntry[], newChunkId: () => string): PermissionCheckChunk[] {
  const open = new Map<string, PermissionCheckChunk>();
  const chunks: PermissionCheckChunk[] = [];
  for (const e of entries) {
    const key = JSON.stringify([e.tenantId, e.userId, e.clientIp, e.userAgent]);
    let chunk = open.get(key);
    const first = chunk && e.createdAt < chunk.firstCreatedAt ? e.createdAt : chunk?.firstCreatedAt;
    const last = chunk && e.createdAt > chunk.lastCreatedAt ? e.createdAt : chunk?.lastCreatedAt;
    if (!chunk || Date.parse(last!) - Date.parse(first!) > CHUNK_MAX_SPAN_MS) {
      chunk = { tenantId: e.tenantId, chunkId: newChunkId(), userId: e.userId, clientIp: e.clientIp, userAgent: e.userAgent, firstCreatedAt: e.createdAt, lastCreatedAt: e.createdAt, entries: [] };
      open.set(key, chunk);
      chunks.push(chunk);
    } else {
      chunk.firstCreatedAt = first!;
      chunk.lastCreatedAt = last!;
    }
    chunk.entries.push([e.id, e.createdAt, e.status, e.errorCode, e.errorMessage, e.metadata]);
  }
  return chunks;
}

/** Appends chunks in one statement over one array per column; a chunk id already there is left as it is (a retried batch). */
export async function insertPermissionCheckChunks(db: Queryable, chunks: readonly PermissionCheckChunk[]): Promise<void> {
  if (chunks.length === 0) return;
  await db.query(
    `insert into audit_permission_checks (tenant_id, chunk_id, user_id, client_ip, user_agent, first_created_at, last_created_at, entry_count, entries)
     select * from unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::int[], $9::text[])
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
      chunks.map((c) => JSON.stringify(c.entries)),
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

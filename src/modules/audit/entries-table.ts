import type { Queryable } from '../../platform/db/pool.ts';
import type { AuditEntry } from './entry.ts';

const COLUMNS = 13;

/**
 * Appends entries in one multi-row statement. An id already there is left as it is: the log is
 * append-only, and a replayed event must not fail or change its entry.
 */
export async function insertAuditEntries(db: Queryable, entries: AuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const values: unknown[] = [];
  const rows = entries.map((e, row) => {
    values.push(e.tenantId, e.id, e.action, e.userId, e.resource, e.resourceId, e.status, e.errorCode, e.errorMessage, e.clientIp, e.userAgent, e.metadata, e.createdAt);
    return `(${Array.from({ length: COLUMNS }, (_, column) => `$${row * COLUMNS + column + 1}`).join(', ')})`;
  });
  await db.query(
    `insert into audit_log (tenant_id, id, action, user_id, resource, resource_id, status, error_code, error_message, client_ip, user_agent, metadata, created_at)
     values ${rows.join(', ')} on conflict (tenant_id, id) do nothing`,
    values,
  );
}

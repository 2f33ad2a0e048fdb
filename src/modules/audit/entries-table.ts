import type { PoolClient, Queryable } from '../../platform/db/pool.ts';
import { maskValuePaths } from '../../platform/events/field-paths.ts';
import { ERASED } from '../../platform/events/personal-data.ts';
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

/**
 * GDPR erasure, the audit log's one permitted rewrite (migrations 0017, 0023): `fields` of
 * metadata.before / metadata.after read "[ERASED]" in every entry of the resource, and so do
 * client_ip and user_agent in those entries and in every entry the person acted in (user_id: the
 * resource that erases is a user), permission checks included. Runs inside the caller's
 * transaction, which declares itself the erasure writer only for these statements.
 */
export async function eraseAuditEntries(
  tx: PoolClient,
  target: { tenantId: string; resource: string; resourceId: string },
  fields: readonly string[],
): Promise<void> {
  const paths = fields.flatMap((field) => [`before.${field}`, `after.${field}`]);
  const { rows } = await tx.query<{ id: string; metadata: Record<string, unknown> }>(
    'select id, metadata from audit_log where tenant_id = $1 and resource = $2 and resource_id = $3 and metadata is not null',
    [target.tenantId, target.resource, target.resourceId],
  );
  const erased = rows
    .map((row) => ({ id: row.id, before: JSON.stringify(row.metadata), after: JSON.stringify(maskValuePaths(row.metadata, paths, ERASED)) }))
    .filter((row) => row.after !== row.before);
  await tx.query("select set_config('iam.audit_erasure', 'on', true)");
  try {
    if (erased.length > 0) {
      await tx.query(
        'update audit_log a set metadata = e.metadata from unnest($2::uuid[], $3::jsonb[]) as e(id, metadata) where a.tenant_id = $1 and a.id = e.id',
        [target.tenantId, erased.map((row) => row.id), erased.map((row) => row.after)],
      );
    }
    await tx.query(
      `update audit_log set client_ip = case when client_ip is null then null else $4 end, user_agent = case when user_agent is null then null else $4 end
        where tenant_id = $1 and ((resource = $2 and resource_id = $3) or user_id = $3)
          and (client_ip <> $4 or user_agent <> $4)`,
      [target.tenantId, target.resource, target.resourceId, ERASED],
    );
  } finally {
    await tx.query("select set_config('iam.audit_erasure', 'off', true)");
  }
}

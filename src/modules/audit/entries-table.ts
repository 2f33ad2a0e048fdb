import type pg from 'pg';
import type { PoolClient, Queryable } from '../../platform/db/pool.ts';
import { maskValuePaths } from '../../platform/events/field-paths.ts';
import { ERASED } from '../../platform/events/personal-data.ts';
import type { AuditEntry } from './entry.ts';

/**
 * Appends entries in one statement over one array per column: 13 parameters whatever the batch
 * size, so PostgreSQL parses and plans one small statement and the driver encodes 13 values (a
 * VALUES list of 13 parameters per row cost about a third more on both sides: docs/decisions.md).
 * An id already there is left as it is: the log is append-only, and a replayed event (or a
 * retried batch) must not fail or change its entry.
 */
export async function insertAuditEntries(db: Queryable, entries: readonly AuditEntry[]): Promise<void> {
  if (entries.length > 0) await db.query(auditEntriesInsert(entries));
}

/** insertAuditEntries' statement, for one or more entries. */
export function auditEntriesInsert(entries: readonly AuditEntry[]): pg.QueryConfig<unknown[]> {
  const n = entries.length;
  const [tenantIds, ids, actions, userIds, resources, resourceIds, statuses, errorCodes, errorMessages, clientIps, userAgents, metadata, createdAts] =
    Array.from({ length: 13 }, () => new Array<string | null>(n));
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    tenantIds![i] = e.tenantId;
    ids![i] = e.id;
    actions![i] = e.action;
    userIds![i] = e.userId;
    resources![i] = e.resource;
    resourceIds![i] = e.resourceId;
    statuses![i] = e.status;
    errorCodes![i] = e.errorCode;
    errorMessages![i] = e.errorMessage;
    clientIps![i] = e.clientIp;
    userAgents![i] = e.userAgent;
    metadata![i] = e.metadata === null ? null : JSON.stringify(e.metadata);
    createdAts![i] = e.createdAt;
  }
  // Named: planned once per connection (an insert from arrays plans the same whatever the table holds).
  return {
    name: 'audit_log_entries',
    text: `insert into audit_log (tenant_id, id, action, user_id, resource, resource_id, status, error_code, error_message, client_ip, user_agent, metadata, created_at)
     select * from unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::jsonb[], $13::timestamptz[])
     on conflict (tenant_id, id) do nothing`,
    values: [tenantIds, ids, actions, userIds, resources, resourceIds, statuses, errorCodes, errorMessages, clientIps, userAgents, metadata, createdAts],
  };
}

/**
 * GDPR erasure, the audit log's one permitted rewrite (migrations 0017, 0023): `fields` of
 * metadata.before / metadata.after read "[ERASED]" in every entry of the resource, and so do
 * client_ip and user_agent in those entries and in every entry the person acted in (user_id: the
 * resource that erases is a user), permission checks included (in audit_log before migration 0029,
 * in audit_permission_checks since). Runs inside the caller's
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
    await tx.query(
      `update audit_permission_checks set client_ip = case when client_ip is null then null else $3 end, user_agent = case when user_agent is null then null else $3 end
        where tenant_id = $1 and user_id = $2 and (client_ip <> $3 or user_agent <> $3)`,
      [target.tenantId, target.resourceId, ERASED],
    );
  } finally {
    await tx.query("select set_config('iam.audit_erasure', 'off', true)");
  }
}

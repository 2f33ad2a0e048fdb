import type { Queryable } from '../../platform/db/pool.ts';
import type { AuditEntry } from './entry.ts';
import { newestFirst, permissionCheckCount, permissionCheckPage } from './permission-check-listing.ts';
import { PERMISSION_CHECK } from './vocabulary.ts';

export interface AuditLogFilter {
  offset: number;
  limit: number;
  action?: string | undefined;
  userId?: string | undefined;
  /** Inclusive bounds. */
  from?: Date | undefined;
  to?: Date | undefined;
  excludeActions: string[];
}

export type AuditLogItem = Omit<AuditEntry, 'tenantId'>;

interface AuditRow {
  id: string;
  action: string;
  user_id: string | null;
  resource: string | null;
  resource_id: string | null;
  status: AuditEntry['status'];
  error_code: string | null;
  error_message: string | null;
  client_ip: string | null;
  user_agent: string | null;
  metadata: Record<string, unknown> | null;
  created_at: Date;
}

const toItem = (row: AuditRow): AuditLogItem => ({
  id: row.id,
  action: row.action,
  userId: row.user_id,
  resource: row.resource,
  resourceId: row.resource_id,
  status: row.status,
  errorCode: row.error_code,
  errorMessage: row.error_message,
  clientIp: row.client_ip,
  userAgent: row.user_agent,
  metadata: row.metadata,
  createdAt: row.created_at.toISOString(),
});

/**
 * How many matching entries the listing counts at most (or offset + limit + 1 when paging deeper).
 * Counting a million index entries costs hundreds of milliseconds; counting stops here, so `total`
 * is exact up to the cap and a lower bound beyond it (`totalCapped`), while `hasMore` stays exact
 * (docs/decisions.md, Audit log and history).
 */
export const AUDIT_TOTAL_CAP = 10_000;

const COLUMNS = 'id, action, user_id, resource, resource_id, status, error_code, error_message, client_ip, user_agent, metadata, created_at';

/** Reads of the audit log, newest first, always within one tenant. */
export function auditQueries(db: Queryable) {
  return {
    async get(tenant: string, id: string): Promise<AuditLogItem | null> {
      const { rows } = await db.query<AuditRow>('select * from audit_log where tenant_id = $1 and id = $2', [tenant, id]);
      return rows[0] ? toItem(rows[0]) : null;
    },
    async list(tenant: string, filter: AuditLogFilter): Promise<{ items: AuditLogItem[]; total: number; totalCapped: boolean }> {
      const params: unknown[] = [tenant];
      const where = ['tenant_id = $1'];
      const add = (condition: (param: string) => string, value: unknown) => {
        params.push(value);
        where.push(condition(`$${params.length}`));
      };
      if (filter.action !== undefined) add((p) => `action = ${p}`, filter.action);
      if (filter.userId !== undefined) add((p) => `user_id = ${p}`, filter.userId);
      if (filter.from) add((p) => `created_at >= ${p}`, filter.from);
      // Inclusive to the millisecond: everything before the next millisecond.
      if (filter.to) add((p) => `created_at < ${p}`, new Date(filter.to.getTime() + 1));
      // One `<>` per action (not `<> all(array)`): the planner can then match the partial index
      // that leaves PERMISSION_CHECK out.
      for (const action of filter.excludeActions) add((p) => `action <> ${p}`, action);
      const condition = where.join(' and ');
      const cap = Math.max(AUDIT_TOTAL_CAP, filter.offset + filter.limit + 1);
      // Ordered like the page: the count then walks the index that serves the page, index-only.
      // Unordered, a filter matching most rows (action=PERMISSION_CHECK) was planned as a
      // sequential scan, slow whenever the table's pages were not cached.
      const counting = db.query<{ total: string }>(
        `select count(*) as total from (select from audit_log where ${condition} order by created_at desc, id desc limit ${cap}) as matching`,
        params,
      );
      const includesChecks = (filter.action === undefined || filter.action === PERMISSION_CHECK) && !filter.excludeActions.includes(PERMISSION_CHECK);
      if (!includesChecks) {
        const [page, count] = await Promise.all([
          db.query<AuditRow>(`select ${COLUMNS} from audit_log where ${condition} order by created_at desc, id desc limit ${filter.limit} offset ${filter.offset}`, params),
          counting,
        ]);
        const total = Number(count.rows[0]?.total ?? 0);
        return { items: page.rows.map(toItem), total, totalCapped: total === cap };
      }
      // PERMISSION_CHECK entries live in chunks (migration 0029; older ones still in audit_log): the
      // page is the merge of audit_log's newest offset + limit keys and the chunks' newest entries.
      const wanted = filter.offset + filter.limit;
      const [{ rows: keys }, count] = await Promise.all([
        db.query<{ id: string; created_at: Date }>(`select id, created_at from audit_log where ${condition} order by created_at desc, id desc limit ${wanted}`, params),
        counting,
      ]);
      const logged = keys.map((key) => ({ id: key.id, createdAt: key.created_at.toISOString(), item: null as AuditLogItem | null }));
      const [checks, checkCount] = await Promise.all([
        permissionCheckPage(db, tenant, filter, filter.offset, filter.limit, logged.map((key) => key.createdAt)),
        permissionCheckCount(db, tenant, filter, cap),
      ]);
      // The entries before checks' region all precede the page: only the rest are merged.
      const start = filter.offset - checks.preceding;
      const page = [...logged.slice(checks.loggedPreceding), ...checks.entries.map((item) => ({ id: item.id, createdAt: item.createdAt, item }))]
        .sort(newestFirst)
        .slice(start, start + filter.limit);
      const fromLog = page.filter((entry) => entry.item === null).map((entry) => entry.id);
      const rows = fromLog.length === 0 ? { rows: [] } : await db.query<AuditRow>(`select ${COLUMNS} from audit_log where tenant_id = $1 and id = any($2::uuid[])`, [tenant, fromLog]);
      const byId = new Map(rows.rows.map((row) => [row.id, toItem(row)]));
      const total = Math.min(cap, Number(count.rows[0]?.total ?? 0) + checkCount.count);
      return { items: page.map((entry) => entry.item ?? byId.get(entry.id)!), total, totalCapped: total === cap || checkCount.countCapped };
    },
  };
}

export type AuditQueries = ReturnType<typeof auditQueries>;

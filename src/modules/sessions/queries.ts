import type { Queryable } from '../../platform/db/pool.ts';
import { isUuid } from '../../platform/ids.ts';

export interface SessionView {
  id: string;
  tenantId: string;
  userId: string;
  ipAddress: string | null;
  userAgent: string | null;
  device: string;
  revoked: boolean;
  status: 'active' | 'revoked' | 'expired';
  createdAt: string;
  updatedAt: string;
  expiresAt: string;
  user: { email: string | null; firstName: string | null; lastName: string | null };
}

interface SessionRow {
  id: string;
  tenant_id: string;
  user_id: string;
  ip_address: string | null;
  user_agent: string | null;
  device: string;
  revoked: boolean;
  expired: boolean;
  created_at: Date;
  updated_at: Date;
  expires_at: Date;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
}

const toView = (row: SessionRow): SessionView => ({
  id: row.id,
  tenantId: row.tenant_id,
  userId: row.user_id,
  ipAddress: row.ip_address,
  userAgent: row.user_agent,
  device: row.device,
  revoked: row.revoked,
  status: row.revoked ? 'revoked' : row.expired ? 'expired' : 'active',
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  expiresAt: row.expires_at.toISOString(),
  user: { email: row.email, firstName: row.first_name, lastName: row.last_name },
});

/** Not revoked and not past its lifetime or idle limit at the time bound to `at`. */
const active = (at: string) => `(not s.revoked and s.expired_at is null and s.expires_at > ${at} and s.idle_expires_at > ${at})`;
const select = (at: string) => `select s.*, not ${active(at)} and not s.revoked as expired, u.email, u.first_name, u.last_name
                  from sessions s left join users u on u.tenant_id = s.tenant_id and u.id = s.user_id`;

export function sessionQueries(db: Queryable, now: () => Date) {
  return {
    async list(tenant: string, query: { page: number; limit: number; userId?: string | undefined; status?: 'active' | 'revoked' | undefined }) {
      const params: unknown[] = [tenant, now()];
      const where = ['s.tenant_id = $1'];
      if (query.userId) {
        // Not a UUID: no session can match (and the uuid comparison keeps the index usable).
        params.push(isUuid(query.userId) ? query.userId : null);
        where.push(`s.user_id = $${params.length}::uuid`);
      }
      if (query.status === 'active') where.push(active('$2'));
      if (query.status === 'revoked') where.push('s.revoked');
      // Every query binds $2 (now), typed here so the ones that do not compare with it still plan.
      const filter = `${where.join(' and ')} and $2::timestamptz is not null`;
      // The filtered total and the tenant-wide stats in one scan of the tenant's sessions.
      const [{ rows }, counts] = await Promise.all([
        db.query<SessionRow>(`${select('$2')} where ${filter} order by s.updated_at desc, s.id desc limit ${query.limit} offset ${(query.page - 1) * query.limit}`, params),
        db.query<{ total: string; active: string; last24h: string }>(
          `select count(*) filter (where ${filter}) as total, count(*) filter (where ${active('$2')}) as active,
                  count(*) filter (where s.created_at > $2::timestamptz - interval '24 hours') as last24h
             from sessions s where s.tenant_id = $1`,
          params,
        ),
      ]);
      const count = counts.rows[0];
      return {
        sessions: rows.map(toView),
        total: Number(count?.total ?? 0),
        stats: { active: Number(count?.active ?? 0), last24h: Number(count?.last24h ?? 0) },
      };
    },

    async get(tenant: string, sessionId: string): Promise<SessionView | null> {
      if (!isUuid(sessionId)) return null;
      const { rows } = await db.query<SessionRow>(`${select('$2')} where s.tenant_id = $1 and s.id = $3`, [tenant, now(), sessionId]);
      return rows[0] ? toView(rows[0]) : null;
    },

    /** Sessions of every tenant whose time is up but that no SessionExpired has ended yet (the sweep's work). */
    async due(limit: number): Promise<{ tenant: string; sessionId: string }[]> {
      const { rows } = await db.query<{ tenant_id: string; id: string }>(
        `select tenant_id, id from sessions where not revoked and expired_at is null and least(expires_at, idle_expires_at) <= $1
          order by least(expires_at, idle_expires_at) limit ${limit}`,
        [now()],
      );
      return rows.map((r) => ({ tenant: r.tenant_id, sessionId: r.id }));
    },

    /**
     * Every session of a user, whatever the read model says of it: the reaction to a deletion lets
     * each session's own stream decide whether anything is left to revoke.
     */
    async allOf(tenant: string, userId: string): Promise<string[]> {
      const { rows } = await db.query<{ id: string }>('select id from sessions where tenant_id = $1 and user_id = $2 order by created_at, id', [tenant, userId]);
      return rows.map((r) => r.id);
    },

    /** A user's active sessions, oldest first (for maxConcurrentSessions). */
    async activeOf(tenant: string, userId: string): Promise<string[]> {
      const { rows } = await db.query<{ id: string }>(
        `select s.id from sessions s where s.tenant_id = $1 and s.user_id = $3 and ${active('$2')} order by s.created_at, s.id`,
        [tenant, now(), userId],
      );
      return rows.map((r) => r.id);
    },
  };
}

export type SessionQueries = ReturnType<typeof sessionQueries>;

import { deviceLabel, type SessionExpired, type SessionRefreshed, type SessionRevoked, type SessionStarted, type SessionUsed } from '../src/modules/sessions/index.ts';
import type { UserErased } from '../src/modules/users/index.ts';
import type { PoolClient } from '../src/platform/db/pool.ts';
import { ERASED } from '../src/platform/events/personal-data.ts';
import type { RecordedEvent } from '../src/platform/eventstore/port.ts';
import { defineProjection, type ProjectionBatchWrites, type Statement } from '../src/platform/projections/projection.ts';

const addSeconds = (iso: string, seconds: number) => new Date(new Date(iso).getTime() + seconds * 1000).toISOString();

/**
 * Activity moves updatedAt and the idle deadline with it. A run of activity events leaves each
 * session at its latest moment, as applying them one by one (each only if newer) would.
 */
function markUsed(at: (event: RecordedEvent) => { sessionId: string; at: string }): ProjectionBatchWrites {
  return (events) => {
    const uses = events.map(at);
    return [
      {
        text: `update sessions s set updated_at = u.at, idle_expires_at = u.at + (s.idle_expires_at - s.updated_at)
         from (select tenant_id, id, max(at) as at from unnest($1::text[], $2::uuid[], $3::timestamptz[]) as x(tenant_id, id, at) group by 1, 2) u
        where s.tenant_id = u.tenant_id and s.id = u.id and s.updated_at < u.at`,
        values: [events.map((event) => event.metadata.tenantId), uses.map((use) => use.sessionId), uses.map((use) => use.at)],
      },
    ];
  };
}

/** Read model `sessions` (migration 0006). */
export const sessionsProjection = defineProjection({
  name: 'sessions',
  tables: ['sessions'],
  handlers: {
    SessionRevoked: async (event, tx) => {
      const d = event.data as SessionRevoked['data'];
      await tx.query('update sessions set revoked = true, revoked_reason = $3, updated_at = $4 where tenant_id = $1 and id = $2', [
        event.metadata.tenantId,
        d.sessionId,
        d.reason,
        event.metadata.occurredAt,
      ]);
    },
    // A replay reads the erased user's SessionStarted as "[ERASED]"; the live rows are made to match.
    UserErased: async (event, tx) => {
      const { userId } = event.data as UserErased['data'];
      await tx.query(
        `update sessions set ip_address = case when ip_address is null then null else $3 end,
                user_agent = case when user_agent is null then null else $3 end,
                device = case when user_agent is null then $4 else $5 end
          where tenant_id = $1 and user_id = $2`,
        [event.metadata.tenantId, userId, ERASED, deviceLabel(null), deviceLabel(ERASED)],
      );
    },
    SessionExpired: async (event, tx) => {
      const d = event.data as SessionExpired['data'];
      await tx.query('update sessions set expired_at = $3 where tenant_id = $1 and id = $2', [event.metadata.tenantId, d.sessionId, d.expiredAt]);
    },
  },
  // Logins and refresh grants: the hot events.
  batchWrites: {
    SessionStarted: (events) => {
      const started = events.map((event) => event.data as SessionStarted['data']);
      // Named: planned once per connection (an insert from arrays plans the same whatever the table holds).
      const insert: Statement = {
        name: 'sessions_started',
        text: `insert into sessions (tenant_id, id, user_id, ip_address, user_agent, device, created_at, updated_at, expires_at, idle_expires_at)
         select s.tenant_id, s.id, s.user_id, s.ip_address, s.user_agent, s.device, s.started_at, s.started_at, s.expires_at, s.idle_expires_at
           from unnest($1::text[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[])
                with ordinality as s(tenant_id, id, user_id, ip_address, user_agent, device, started_at, expires_at, idle_expires_at, n)
          order by s.n
         on conflict do nothing`,
        values: [
          events.map((event) => event.metadata.tenantId),
          started.map((d) => d.sessionId),
          started.map((d) => d.userId),
          started.map((d) => d.ipAddress),
          started.map((d) => d.userAgent),
          started.map((d) => deviceLabel(d.userAgent)),
          started.map((d) => d.startedAt),
          started.map((d) => d.expiresAt),
          started.map((d) => addSeconds(d.startedAt, d.idleTimeoutSeconds)),
        ],
      };
      return [insert];
    },
    SessionRefreshed: markUsed((event) => {
      const { sessionId, refreshedAt } = event.data as SessionRefreshed['data'];
      return { sessionId, at: refreshedAt };
    }),
    SessionUsed: markUsed((event) => {
      const { sessionId, usedAt } = event.data as SessionUsed['data'];
      return { sessionId, at: usedAt };
    }),
  },
});

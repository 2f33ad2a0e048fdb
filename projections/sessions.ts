import type { PoolClient } from '../src/platform/db/pool.ts';
import type { SessionExpired, SessionRefreshed, SessionRevoked, SessionStarted, SessionUsed } from '../src/modules/sessions/events.ts';
import { deviceLabel } from '../src/modules/sessions/device-label.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

const addSeconds = (iso: string, seconds: number) => new Date(new Date(iso).getTime() + seconds * 1000).toISOString();

/** Activity moves updatedAt and the idle deadline with it. */
async function markUsed(tx: PoolClient, tenant: string, sessionId: string, at: string): Promise<void> {
  await tx.query(
    `update sessions set updated_at = $3, idle_expires_at = $3::timestamptz + (idle_expires_at - updated_at)
      where tenant_id = $1 and id = $2 and updated_at < $3`,
    [tenant, sessionId, at],
  );
}

/** Read model `sessions` (migration 0006). */
export const sessionsProjection = defineProjection({
  name: 'sessions',
  tables: ['sessions'],
  handlers: {
    SessionStarted: async (event, tx) => {
      const d = event.data as SessionStarted['data'];
      await tx.query(
        `insert into sessions (tenant_id, id, user_id, ip_address, user_agent, device, created_at, updated_at, expires_at, idle_expires_at)
         values ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9) on conflict do nothing`,
        [event.metadata.tenantId, d.sessionId, d.userId, d.ipAddress, d.userAgent, deviceLabel(d.userAgent), d.startedAt, d.expiresAt, addSeconds(d.startedAt, d.idleTimeoutSeconds)],
      );
    },
    SessionRefreshed: async (event, tx) => {
      const { sessionId, refreshedAt } = event.data as SessionRefreshed['data'];
      await markUsed(tx, event.metadata.tenantId, sessionId, refreshedAt);
    },
    SessionUsed: async (event, tx) => {
      const { sessionId, usedAt } = event.data as SessionUsed['data'];
      await markUsed(tx, event.metadata.tenantId, sessionId, usedAt);
    },
    SessionRevoked: async (event, tx) => {
      const d = event.data as SessionRevoked['data'];
      await tx.query('update sessions set revoked = true, revoked_reason = $3, updated_at = $4 where tenant_id = $1 and id = $2', [
        event.metadata.tenantId,
        d.sessionId,
        d.reason,
        event.metadata.occurredAt,
      ]);
    },
    SessionExpired: async (event, tx) => {
      const d = event.data as SessionExpired['data'];
      await tx.query('update sessions set expired_at = $3 where tenant_id = $1 and id = $2', [event.metadata.tenantId, d.sessionId, d.expiredAt]);
    },
  },
});

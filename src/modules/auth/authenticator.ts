import type { Queryable } from '../../platform/db/pool.ts';
import type { Authenticator, Principal } from '../../platform/http/authentication.ts';
import type { TokenService } from './tokens.ts';

/**
 * Bearer token -> principal: the token's roles resolved to permissions in the token's tenant.
 * `onSessionUse` hears of every request made with a session's token (session activity).
 */
export function tokenAuthenticator(
  tokens: TokenService,
  db: Queryable,
  onSessionUse: (tenant: string, sessionId: string, userId: string) => void = () => undefined,
): Authenticator {
  return {
    async authenticate(token: string, tenant: string): Promise<Principal> {
      const claims = await tokens.verify(token, tenant);
      if (claims.sid) onSessionUse(tenant, claims.sid, claims.sub);
      const { rows } = await db.query<{ permission: string }>(
        'select distinct unnest(permissions) as permission from roles where tenant_id = $1 and name = any($2::text[])',
        [tenant, claims.roles],
      );
      return {
        subject: claims.sub,
        tenant,
        sessionId: claims.sid ?? null,
        roles: claims.roles,
        permissions: new Set(rows.map((r) => r.permission)),
        claims,
      };
    },
  };
}

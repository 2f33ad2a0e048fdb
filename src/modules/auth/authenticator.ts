import { permissionsWithinScope } from '../roles/index.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import type { Authenticator, Principal } from '../../platform/http/authentication.ts';
import type { AccessTokenClaims, TokenService } from './tokens.ts';

/** A token issued to a client for itself (RFC 9068: client_credentials, sub = client_id): it holds no roles. */
const isClientToken = (claims: AccessTokenClaims) => typeof claims.client_id === 'string' && claims.client_id === claims.sub;

/**
 * Bearer token -> principal: the token's roles resolved to permissions in the token's tenant, and
 * limited to its `scope` claim when it has one (a client token: the scope's permission names).
 * `onSessionUse` hears of every request made with a session's token (session activity).
 */
export function tokenAuthenticator(
  tokens: TokenService,
  db: Queryable,
  onSessionUse: (tenant: string, sessionId: string, userId: string) => void = () => undefined,
): Authenticator {
  const rolePermissions = async (tenant: string, roles: string[]) => {
    const { rows } = await db.query<{ permission: string }>(
      'select distinct unnest(permissions) as permission from roles where tenant_id = $1 and name = any($2::text[])',
      [tenant, roles],
    );
    return new Set(rows.map((r) => r.permission));
  };

  return {
    async authenticate(token: string, tenant: string): Promise<Principal> {
      const claims = await tokens.verify(token, tenant);
      if (claims.sid) onSessionUse(tenant, claims.sid, claims.sub);
      const scope = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : null;
      const client = isClientToken(claims);
      const held = client ? null : await rolePermissions(tenant, claims.roles);
      return {
        subject: claims.sub,
        tenant,
        sessionId: claims.sid ?? null,
        roles: client ? [] : claims.roles,
        permissions: scope ? permissionsWithinScope(held, scope) : (held ?? new Set()),
        claims,
      };
    },
  };
}

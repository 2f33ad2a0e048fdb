import type { RoleQueries } from '../roles/index.ts';
import type { NestedSettings } from '../settings/index.ts';
import type { TokenSubject } from '../users/index.ts';
import type { TokenService } from './tokens.ts';

/** Claims a tenant's tokenClaims setting may not replace. */
const RESERVED = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'tid', 'sid', 'roles', 'acr', 'amr', 'scope', 'azp', 'client_id', 'typ']);

/**
 * An access token for a user's session: the names of the roles that still exist, and the extra
 * claims the tenant maps from user fields (settings section tokenClaims). Answers the token and the
 * roles it names (`held`), for callers that judge the holder by them.
 */
export async function accessTokenFor(
  deps: { tokens: TokenService; roles: RoleQueries },
  tenant: string,
  user: TokenSubject,
  session: { sessionId: string; acr: string; amr: string[] },
  settings: NestedSettings,
  /** A token issued to an OAuth client for the user: its scope (which limits the permissions) and client. */
  client?: { clientId: string; scope: string },
) {
  const existing = await deps.roles.byNames(tenant, user.roles.map((r) => r.name));
  const held = existing.filter((r) => user.roles.some((ref) => ref.id === r.id));
  const extra = Object.fromEntries(
    settings.tokenClaims.claims.filter(({ claim }) => !RESERVED.has(claim)).map(({ claim, from }) => [claim, user[from]]),
  );
  const issued = await deps.tokens.issue(
    {
      ...extra,
      sub: user.userId,
      tid: tenant,
      sid: session.sessionId,
      roles: held.map((r) => r.name),
      acr: session.acr,
      amr: session.amr,
      ...(client ? { scope: client.scope, client_id: client.clientId } : {}),
    },
    settings.tokens.accessTokenExpiry,
  );
  return { ...issued, held };
}

import { permissionsWithinScope } from '../roles/index.ts';
import { platformError } from '../../platform/errors.ts';
import type { Authenticator, Principal } from '../../platform/http/authentication.ts';
import type { AccessTokenClaims, TokenService } from './tokens.ts';

/** A token issued to a client for itself (RFC 9068: client_credentials, sub = client_id): it holds no roles. */
const isClientToken = (claims: AccessTokenClaims) => typeof claims.client_id === 'string' && claims.client_id === claims.sub;

/**
 * Bearer token -> principal: the token's roles resolved to permissions in the token's tenant, and
 * limited to its `scope` claim when it has one (a client token: the scope's permission names).
 * `rolePermissions` answers from the roles cache, so authenticating costs no query.
 * `onSessionUse` hears of every request made with a session's token (session activity).
 */
export function tokenAuthenticator(
  tokens: TokenService,
  rolePermissions: (tenant: string, roles: readonly string[]) => ReadonlySet<string> | Promise<ReadonlySet<string>>,
  onSessionUse: (tenant: string, sessionId: string, userId: string) => void = () => undefined,
  /** Whether the tenant has disabled or deleted a token's user: its unexpired tokens are refused too. */
  userRefused: (tenant: string, userId: string) => boolean | Promise<boolean> = () => false,
  /** Whether a client's own token names an application that no longer exists: refused too. */
  clientRefused: (tenant: string, clientId: string) => boolean | Promise<boolean> = () => false,
): Authenticator {
  const refusedToken = () => platformError('TOKEN_INVALID', 'The access token is invalid');
  const principalOf = (claims: AccessTokenClaims, tenant: string, held: ReadonlySet<string> | null): Principal => {
    const scope = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : null;
    const client = held === null;
    return {
      subject: claims.sub,
      tenant,
      sessionId: claims.sid ?? null,
      roles: client ? [] : claims.roles,
      permissions: scope ? permissionsWithinScope(held, scope) : (held ?? new Set()),
      claims,
    };
  };
  const ofUser = (claims: AccessTokenClaims, tenant: string): Principal | Promise<Principal> => {
    if (claims.sid) onSessionUse(tenant, claims.sid, claims.sub);
    const held = rolePermissions(tenant, claims.roles);
    return held instanceof Promise ? held.then((loaded) => principalOf(claims, tenant, loaded)) : principalOf(claims, tenant, held);
  };
  const admitted = (claims: AccessTokenClaims, tenant: string, client: boolean): Principal | Promise<Principal> =>
    client ? principalOf(claims, tenant, null) : ofUser(claims, tenant);
  /** A client's token while its application exists, a user's while the tenant has not disabled or deleted them. */
  const withClaims = (claims: AccessTokenClaims, tenant: string): Principal | Promise<Principal> => {
    const client = isClientToken(claims);
    const refused = client ? clientRefused(tenant, claims.sub) : userRefused(tenant, claims.sub);
    if (refused instanceof Promise) {
      return refused.then((isRefused) => {
        if (isRefused) throw refusedToken();
        return admitted(claims, tenant, client);
      });
    }
    if (refused) throw refusedToken();
    return admitted(claims, tenant, client);
  };
  return {
    // Without a promise when the token was verified before and the tenant's roles are loaded: the
    // common case, on every authenticated request.
    authenticate(token: string, tenant: string): Principal | Promise<Principal> {
      const claims = tokens.verify(token, tenant);
      return claims instanceof Promise ? claims.then((verified) => withClaims(verified, tenant)) : withClaims(claims, tenant);
    },
  };
}

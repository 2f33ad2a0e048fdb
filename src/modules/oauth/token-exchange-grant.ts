import { GRANT_TYPES, tenantNamedByClientId, type ApplicationDirectory } from '../applications/index.ts';
import type { AccessTokenClaims, Grant, TokenService } from '../auth/index.ts';
import { permissionsWithinScope, type RoleQueries } from '../roles/index.ts';
import { invalidGrant } from '../sessions/index.ts';
import type { SettingsProvider } from '../settings/index.ts';
import type { Clock } from '../../platform/clock.ts';
import { assertGrantAllowed, authenticateClient } from './client-authentication.ts';
import { oauthError } from './errors.ts';
import { scopeList } from './scopes.ts';

const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * grant_type=urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693; decisions.md): a client
 * holding the grant trades one of our access tokens of its own tenant (subject_token) for a token
 * of the same subject, optionally for another client of the tenant (audience) and acting through
 * an actor (actor_token: the new token carries `act: {sub}`). The scope never widens: within the
 * subject token's scope, or, when it has none, the requested scope intersected with the subject's current permissions. No
 * refresh token.
 */
export function tokenExchangeGrant(deps: { applications: ApplicationDirectory; clock: Clock; tokens: TokenService; roles: RoleQueries; settings: SettingsProvider }): Grant {
  /** One of our access tokens of `tenant`, or invalid_grant (another tenant's, expired, forged). */
  async function verified(token: string | undefined, type: string | undefined, name: string, tenant: string): Promise<AccessTokenClaims> {
    if (!token) throw oauthError('invalid_request', `The ${name} parameter is required`);
    if (type !== ACCESS_TOKEN_TYPE) throw oauthError('invalid_request', `${name}_type must be ${ACCESS_TOKEN_TYPE}`);
    try {
      return await deps.tokens.verify(token, tenant);
    } catch {
      throw invalidGrant(`The ${name} is not a valid access token of this tenant`);
    }
  }

  async function grantedScope(subject: AccessTokenClaims, tenant: string, requested: string[]): Promise<string[] | null> {
    const held = typeof subject.scope === 'string' ? scopeList(subject.scope) : null;
    if (held) {
      const wider = requested.filter((scope) => !held.includes(scope));
      if (wider.length) throw oauthError('invalid_scope', `Scope wider than the subject token's: ${wider.join(' ')}`);
      return requested.length ? requested : held;
    }
    if (!requested.length) return null;
    const roles = await deps.roles.byNames(tenant, subject.roles);
    const permissions = new Set(roles.flatMap((role) => role.permissions));
    // decisions.md: the requested scope intersected with the subject's current permissions (never wider).
    return [...permissionsWithinScope(permissions, requested)];
  }

  return {
    tenantNamedBy: (params) => tenantNamedByClientId(params.client_id),
    async handle(params, tenant) {
      const client = await authenticateClient(deps.applications, tenant, params);
      assertGrantAllowed(client, GRANT_TYPES.tokenExchange);
      const subject = await verified(params.subject_token, params.subject_token_type, 'subject_token', tenant);
      const actor = params.actor_token ? await verified(params.actor_token, params.actor_token_type, 'actor_token', tenant) : null;
      const audience = params.audience ?? null;
      if (audience !== null && !(await deps.applications.byClientId(tenant, audience))) {
        throw oauthError('invalid_target', 'audience must be a client_id of this tenant');
      }
      const scope = await grantedScope(subject, tenant, scopeList(params.scope));
      const { settings } = await deps.settings.nested(tenant);
      const access = await deps.tokens.issue(
        {
          sub: subject.sub,
          tid: tenant,
          roles: subject.roles,
          acr: subject.acr,
          amr: subject.amr,
          client_id: client.clientId,
          ...(scope ? { scope: scope.join(' ') } : {}),
          ...(audience ? { aud: audience } : {}),
          // Delegation: who acts, and on whose behalf the subject token already acted (RFC 8693 4.1).
          ...(actor ? { act: { sub: actor.sub, ...(subject.act ? { act: subject.act } : {}) } } : {}),
        },
        // Never outliving the subject token.
        Math.max(1, Math.min(settings.tokens.accessTokenExpiry, (subject.exp ?? 0) - Math.floor(deps.clock.now().getTime() / 1000))),
      );
      return {
        response: {
          access_token: access.token,
          issued_token_type: ACCESS_TOKEN_TYPE,
          token_type: 'Bearer',
          expires_in: access.expiresIn,
          ...(scope ? { scope: scope.join(' ') } : {}),
        },
      };
    },
  };
}

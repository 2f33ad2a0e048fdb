import { GRANT_TYPES, tenantNamedByClientId, type ApplicationDirectory } from '../applications/index.ts';
import type { Grant, TokenService } from '../auth/index.ts';
import type { SettingsProvider } from '../settings/index.ts';
import { assertGrantAllowed, authenticateClient } from './client-authentication.ts';
import { grantedScopes } from './scopes.ts';

/**
 * grant_type=client_credentials (decisions.md): a token for the application itself (sub =
 * client_id, no roles); its `scope` claim holds the permission names granted, a subset of the
 * application's scopes (all of them when none is asked). No refresh token, and no event: issuing a
 * token changes no state (RFC 6749 4.4.3).
 */
export function clientCredentialsGrant(deps: { applications: ApplicationDirectory; tokens: TokenService; settings: SettingsProvider }): Grant {
  return {
    tenantNamedBy: (params) => tenantNamedByClientId(params.client_id),
    appendsNothing: true,
    async handle(params, tenant) {
      const application = await authenticateClient(deps.applications, tenant, params);
      assertGrantAllowed(application, GRANT_TYPES.clientCredentials);
      const scopes = grantedScopes(params.scope, application.scopes, application.scopes);
      const { settings } = await deps.settings.nested(tenant);
      const scope = scopes.join(' ');
      const access = await deps.tokens.issue(
        { sub: application.clientId, client_id: application.clientId, tid: tenant, roles: [], acr: '0', amr: [], scope },
        settings.tokens.accessTokenExpiry,
      );
      return { response: { access_token: access.token, token_type: 'Bearer', expires_in: access.expiresIn, scope } };
    },
  };
}

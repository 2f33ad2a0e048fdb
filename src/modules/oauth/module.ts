import type { Grant, TokenService } from '../auth/index.ts';
import type { KeyRing } from '../keys/index.ts';
import type { RoleQueries } from '../roles/index.ts';
import type { SessionCommands } from '../sessions/index.ts';
import type { SettingsProvider } from '../settings/index.ts';
import type { TokenSubjects } from '../users/index.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import type { FormCsrf } from '../../platform/http/form-csrf.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { authorizationCodeGrant, clientAwareRefreshGrant } from './authorization-code-grant.ts';
import { registerAuthorizationRoutes } from './authorization-routes.ts';
import { registerLogoutRoutes } from './logout-routes.ts';
import { clientCredentialsGrant } from './client-credentials-grant.ts';
import { clientSessionTokens } from './client-sessions.ts';
import { codeCommands } from './codes.ts';
import { providerMetadata } from './discovery.ts';
import { errorStatuses } from './errors.ts';
import { IdTokens } from './id-tokens.ts';
import { tokenExchangeGrant } from './token-exchange-grant.ts';
import { deviceCodeGrant } from './device-code-grant.ts';
import { deviceFlow } from './device-flow.ts';
import { registerDeviceRoutes } from './device-routes.ts';
import type { FormSignInDeps } from './form-sign-in.ts';
import { GRANT_TYPES, type ApplicationDirectory } from '../applications/index.ts';

export interface OAuthModuleDeps {
  store: EventStore;
  applications: ApplicationDirectory;
  clock: Clock;
  tokens: TokenService;
  keyRing: KeyRing;
  issuer: string;
  roles: RoleQueries;
  settings: SettingsProvider;
  sessions: SessionCommands;
  secretBox: SecretBox;
  /** Users as tokens need them, from memory (refresh and code grants). */
  subjects: TokenSubjects;
}

/** The codes the token endpoint answers for the grants of this module. */
export const OAUTH_GRANT_ERRORS = Object.keys(errorStatuses);

/** The OAuth 2.0 / OIDC provider: grants for the token endpoint's registry, and the authorization endpoint. */
export function oauthModule(deps: OAuthModuleDeps) {
  const codes = codeCommands(deps);
  const idTokens = new IdTokens(deps.keyRing, deps.issuer, deps.clock);
  const codeDeps = { ...deps, codes, tokensFor: clientSessionTokens({ ...deps, idTokens }) };
  const devices = deviceFlow(deps);
  return {
    /** Added to (and, for refresh_token, wrapping) the token endpoint's own grants. */
    grants(base: Record<string, Grant>): Record<string, Grant> {
      return {
        ...base,
        client_credentials: clientCredentialsGrant(deps),
        authorization_code: authorizationCodeGrant(codeDeps),
        [GRANT_TYPES.tokenExchange]: tokenExchangeGrant(deps),
        [GRANT_TYPES.deviceCode]: deviceCodeGrant({ ...codeDeps, devices }),
        ...(base.refresh_token ? { refresh_token: clientAwareRefreshGrant(codeDeps, base.refresh_token) } : {}),
      };
    },
    /** Discovery's members for the provider, given the token endpoint's grant types. */
    discovery: (grantTypes: string[]) => providerMetadata(grantTypes, {
        end_session_endpoint: `${deps.issuer}/api/oauth/logout`,
        device_authorization_endpoint: `${deps.issuer}/api/oauth/device_authorization`,
      }),
    registerRoutes(app: HttpServer, routeDeps: FormSignInDeps & { csrf: FormCsrf }): void {
      registerAuthorizationRoutes(app, { ...deps, ...routeDeps, codes });
      registerLogoutRoutes(app, { ...deps, idTokens });
      registerDeviceRoutes(app, { ...deps, ...routeDeps, devices });
    },
  };
}

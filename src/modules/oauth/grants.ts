import type { Grant, TokenService } from '../auth/index.ts';
import type { SettingsProvider } from '../settings/index.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import { clientCredentialsGrant } from './client-credentials-grant.ts';
import { errorStatuses } from './errors.ts';

export interface OAuthGrantDeps {
  store: EventStore;
  tokens: TokenService;
  settings: SettingsProvider;
}

/** The codes the token endpoint answers for the grants of this module. */
export const OAUTH_GRANT_ERRORS = Object.keys(errorStatuses);

/** The grants this module adds to the token endpoint's registry, by grant_type. */
export function oauthGrants(deps: OAuthGrantDeps): Record<string, Grant> {
  return { client_credentials: clientCredentialsGrant(deps) };
}

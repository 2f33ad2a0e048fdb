import type { RoleQueries } from '../roles/index.ts';
import { invalidGrant, tenantNamedByRefreshToken, type SessionCommands } from '../sessions/index.ts';
import type { SettingsProvider } from '../settings/index.ts';
import type { TokenSubjects } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import { authError } from './errors.ts';
import { accessTokenFor } from './access-tokens.ts';
import type { TokenService } from './tokens.ts';

/** RFC 6749 section 5.1 success response. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
}

export type GrantParams = Record<string, string | undefined>;

/** A grant_type's handler; the oauth module adds its grants beside these. */
export interface Grant {
  /** The tenant the grant's credential names (unverified; the handler proves it), or null. */
  tenantNamedBy(params: GrantParams): string | null;
  /** Issuing appends no event, refusals included: the token route keeps no write log for it. */
  appendsNothing?: true;
  handle(params: GrantParams, tenant: string, context: CommandContext): Promise<{ response: TokenResponse }>;
}

export interface TokenEndpointDeps {
  store: EventStore;
  tokens: TokenService;
  roles: RoleQueries;
  settings: SettingsProvider;
  sessions: SessionCommands;
  /** The cached users refresh grants issue tokens for. */
  subjects: TokenSubjects;
}

const required = (params: GrantParams, name: string): string => {
  const value = params[name];
  if (!value) throw authError('invalid_request', `The ${name} parameter is required`);
  return value;
};

/**
 * The grant registry of POST /api/auth/token (node-oidc-provider's shape): one handler per
 * grant_type, filled here; the other grants of the spec join it as they are built.
 */
export function grantRegistry(deps: TokenEndpointDeps): Record<string, Grant> {
  const refreshGrant: Grant = {
    tenantNamedBy: (params) => (params.refresh_token ? tenantNamedByRefreshToken(params.refresh_token) : null),
    async handle(params, tenant, context) {
      const refreshed = await deps.sessions.refresh(tenant, required(params, 'refresh_token'), context);
      // A refusal that revoked the session answers once the revocation is readable (the route waits).
      if (refreshed.outcome === 'reused') throw invalidGrant('The refresh token was already used; the session is revoked');
      const { session, refreshToken } = refreshed;
      const user = await deps.subjects.get(tenant, session.userId);
      if (!user?.enabled) {
        await deps.sessions.revoke(tenant, session.sessionId, 'user', context);
        throw invalidGrant('The account is no longer active');
      }
      const { settings } = await deps.settings.nested(tenant);
      const access = await accessTokenFor(deps, tenant, user, session, settings);
      return { response: { access_token: access.token, token_type: 'Bearer', expires_in: access.expiresIn, refresh_token: refreshToken } };
    },
  };
  return { refresh_token: refreshGrant };
}

import { accessTokenFor, type TokenResponse, type TokenService } from '../auth/index.ts';
import type { RoleQueries } from '../roles/index.ts';
import { invalidGrant, type SessionCommands } from '../sessions/index.ts';
import type { SettingsProvider } from '../settings/index.ts';
import type { TokenSubject, TokenSubjects } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import type { ClientGrant } from './code-events.ts';
import type { IdTokens } from './id-tokens.ts';

export interface ClientSessionDeps {
  /** The cached users (as the token endpoint's own refresh grant reads them). */
  subjects: TokenSubjects;
  tokens: TokenService;
  idTokens: IdTokens;
  roles: RoleQueries;
  settings: SettingsProvider;
  sessions: SessionCommands;
}

/**
 * Tokens for a session an OAuth client holds (through a code): rotates the session's refresh token
 * (a reused one revokes the session), and issues an access token carrying the client and the
 * granted scope, plus an ID token when `withIdToken` and the scope holds openid.
 */
export function clientSessionTokens(deps: ClientSessionDeps) {
  return async function tokensFor(
    tenant: string,
    grant: ClientGrant,
    refreshToken: string,
    scope: string[],
    withIdToken: boolean,
    context: CommandContext,
  ): Promise<TokenResponse> {
    const refreshed = await deps.sessions.refresh(tenant, refreshToken, context);
    if (refreshed.outcome === 'reused') throw invalidGrant('The refresh token was already used; the session is revoked');
    const user = await deps.subjects.get(tenant, grant.userId);
    if (!user?.enabled) {
      await deps.sessions.revoke(tenant, grant.sessionId, 'user', context);
      throw invalidGrant('The account is no longer active');
    }
    const { settings } = await deps.settings.nested(tenant);
    const scopeText = scope.join(' ');
    const session = { sessionId: grant.sessionId, acr: grant.acr, amr: grant.amr };
    const access = await accessTokenFor(deps, tenant, user, session, settings, { clientId: grant.clientId, scope: scopeText });
    const idToken = withIdToken && scope.includes('openid') ? await idTokenFor(deps.idTokens, user, grant, scope, access.token, access.expiresIn) : undefined;
    return {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      refresh_token: refreshed.refreshToken,
      ...(idToken ? { id_token: idToken } : {}),
      scope: scopeText,
    };
  };
}

const idTokenFor = (idTokens: IdTokens, user: TokenSubject, grant: ClientGrant, scope: string[], accessToken: string, lifetime: number) =>
  idTokens.issue(user, { ...grant, scope }, accessToken, lifetime);

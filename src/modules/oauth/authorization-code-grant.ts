import { GRANT_TYPES, tenantNamedByClientId, type ApplicationDirectory } from '../applications/index.ts';
import type { Grant } from '../auth/index.ts';
import { invalidGrant, parseRefreshToken, type SessionCommands } from '../sessions/index.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { oauthError } from './errors.ts';
import { assertGrantAllowed, authenticateClient } from './client-authentication.ts';
import type { clientSessionTokens } from './client-sessions.ts';
import { tenantNamedByCode, type CodeCommands } from './codes.ts';
import { scopeList } from './scopes.ts';
import { SessionBindings } from './session-bindings.ts';

export interface CodeGrantDeps {
  applications: ApplicationDirectory;
  codes: CodeCommands;
  sessions: SessionCommands;
  secretBox: SecretBox;
  tokensFor: ReturnType<typeof clientSessionTokens>;
}

/**
 * grant_type=authorization_code (RFC 6749 4.1.3, RFC 7636, OIDC Core 3.1.3): the client that
 * received the code, the exact redirect_uri, the PKCE verifier; a replayed code revokes the
 * session it started, and with it every refresh token issued from it (RFC 6749 4.1.2).
 */
export function authorizationCodeGrant(deps: CodeGrantDeps): Grant {
  return {
    // A code names its tenant; a malformed or missing one leaves it to the client_id, so that it is refused as such
    // (invalid_grant, invalid_request) rather than as a request naming no tenant.
    tenantNamedBy: (params) => tenantNamedByCode(params.code) ?? tenantNamedByClientId(params.client_id),
    async handle(params, tenant, context) {
      const application = await authenticateClient(deps.applications, tenant, params);
      assertGrantAllowed(application, GRANT_TYPES.authorizationCode);
      if (!params.code) throw oauthError('invalid_request', 'The code parameter is required');
      const redeemed = await deps.codes.redeem(
        tenant,
        params.code,
        { clientId: application.clientId, redirectUri: params.redirect_uri ?? null, codeVerifier: params.code_verifier ?? null },
        context,
      );
      if (redeemed.outcome === 'replayed') {
        await deps.sessions.revoke(tenant, redeemed.code.sessionId, 'authorization_code_reuse', context);
        throw invalidGrant('The authorization code was already used: the tokens issued from it are revoked');
      }
      const { code } = redeemed;
      return { response: await deps.tokensFor(tenant, code, deps.secretBox.open(code.sealedRefreshToken), code.scope, true, context) };
    },
  };
}

/**
 * grant_type=refresh_token for every session: one an OAuth client holds through a code is
 * rotated here (the same client must authenticate; the scope may narrow, never widen), any other
 * by the token endpoint's own refresh grant. Which client holds a session is remembered
 * (SessionBindings), so a refresh costs one round trip: the session's append.
 */
export function clientAwareRefreshGrant(deps: CodeGrantDeps, base: Grant, bindings = new SessionBindings()): Grant {
  return {
    // As for codes: a refresh token names its tenant, else the client_id does (a malformed token is then invalid_grant).
    tenantNamedBy: (params) => base.tenantNamedBy(params) ?? tenantNamedByClientId(params.client_id),
    async handle(params, tenant, context) {
      const parsed = params.refresh_token ? parseRefreshToken(params.refresh_token) : null;
      if (!parsed || !params.refresh_token) return base.handle(params, tenant, context);
      let grant = bindings.get(tenant, parsed.id);
      if (grant === undefined) {
        grant = await deps.codes.grantOf(tenant, parsed.id);
        if (grant) bindings.rememberBound(tenant, parsed.id, grant);
      }
      if (!grant) {
        const refreshed = await base.handle(params, tenant, context);
        bindings.rememberUnbound(tenant, parsed.id);
        return refreshed;
      }
      const application = await authenticateClient(deps.applications, tenant, params);
      if (application.clientId !== grant.clientId) throw invalidGrant('The refresh token was issued to another client');
      assertGrantAllowed(application, GRANT_TYPES.refreshToken);
      const asked = scopeList(params.scope);
      const wider = asked.filter((scope) => !grant.scope.includes(scope));
      if (wider.length) throw oauthError('invalid_scope', `Scope not granted: ${wider.join(' ')}`);
      return { response: await deps.tokensFor(tenant, grant, params.refresh_token, asked.length ? asked : grant.scope, false, context) };
    },
  };
}

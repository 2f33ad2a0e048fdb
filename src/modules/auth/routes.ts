import type { SessionCommands } from '../sessions/index.ts';
import { createdUserView, emailSchema, nameSchema, passwordSchema, userDetailSchema, usernameSchema, type UserQueries } from '../users/index.ts';
import { SECOND_FACTOR_METHODS } from '../mfa/index.ts';
import { z } from 'zod';
import { platformError } from '../../platform/errors.ts';
import { principalOf } from '../../platform/http/authentication.ts';
import { ok, okBody } from '../../platform/http/envelopes.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { authenticated, publicAccess, route } from '../../platform/http/route.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { adoptTenant, tenantOf, type CredentialTenantErrors } from '../../platform/http/tenant-resolution.ts';
import { authError } from './errors.ts';
import type { passwordLogin, SignInResult } from './login.ts';
import type { secondFactorSignIn } from './second-factor-sign-in.ts';
import type { signup } from './signup.ts';
import type { Grant } from './token-endpoint.ts';
import { withClientCredentials } from './token-request-params.ts';
import type { Userinfo, UserinfoClaims } from './userinfo.ts';

const loginBody = z.strictObject({ email: z.string().trim().min(1).max(254), password: passwordSchema });
const signupBody = z.strictObject({
  email: emailSchema,
  password: passwordSchema,
  username: usernameSchema.optional(),
  firstName: nameSchema.optional(),
  lastName: nameSchema.optional(),
});
const tokenBody = z.record(z.string(), z.string().max(4096));

/** The login response (password, magic link, signup). */
export const issuedTokensSchema = z.object({
  accessToken: z.string(),
  refreshToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int().describe('seconds'),
  sessionId: z.string(),
  mfaEnrollmentRequired: z
    .literal(true)
    .optional()
    .describe('an administrator without a second factor while the tenant requires one for administrators (requireMfaForAdmin): enrol one'),
});
/** What a first factor answers on an account with a second factor: no tokens, a challenge for /api/auth/mfa/verify. */
const mfaChallengeSchema = z.object({
  mfaRequired: z.literal(true),
  mfaToken: z.string().describe('single use, valid for 5 minutes'),
  availableMethods: z.array(z.enum(SECOND_FACTOR_METHODS)),
});
/** The answer of every sign-in's first factor (password, magic link): tokens, or the second factor's challenge. */
export const signInSchema = z.union([issuedTokensSchema, mfaChallengeSchema]);
export const signInData = (result: SignInResult) => result.tokens ?? result.challenge;
const mfaVerifyBody = z.strictObject({
  mfaToken: z.string().min(1).max(512),
  method: z.enum(SECOND_FACTOR_METHODS),
  code: z.string().trim().min(1).max(64),
});
/** RFC 6749 section 5.1; further members a grant adds (RFC 8693 ...) pass through. */
const tokenResponseSchema = z.looseObject({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  refresh_token: z.string().optional(),
  id_token: z.string().optional(),
  scope: z.string().optional(),
});
const userinfoSchema = z.object({
  sub: z.string(),
  email: z.string().optional(),
  email_verified: z.boolean().optional(),
  given_name: z.string().nullable().optional(),
  family_name: z.string().nullable().optional(),
  preferred_username: z.string().optional(),
  tenant: z.string(),
  roles: z.array(z.string()),
});

/** userinfo's answer: the claims of a user that still exists. */
function existingUser(claims: Userinfo | null): Userinfo {
  if (!claims) throw platformError('TOKEN_INVALID', 'The token does not name an existing user');
  return claims;
}

/**
 * The claims a token restricted to a scope may read (OIDC Core 5.4): email and email_verified with
 * `email`, the names with `profile`. A token without a scope claim (a password login) reads them all.
 */
type ReleasedUserinfo = Pick<Userinfo, 'sub' | 'tenant' | 'roles'> & Partial<Userinfo>;
function released(claims: Userinfo, scope: unknown): ReleasedUserinfo {
  if (typeof scope !== 'string') return claims;
  const names = scope.split(' ');
  const { email, email_verified, given_name, family_name, preferred_username, ...always } = claims;
  return {
    ...always,
    ...(names.includes('email') ? { email, email_verified } : {}),
    ...(names.includes('profile') ? { given_name, family_name, preferred_username } : {}),
  };
}

/** How the token endpoint refuses a grant whose tenant it cannot adopt (made once: not two closures per token request). */
const grantTenantErrors: CredentialTenantErrors = {
  missing: () => authError('invalid_request', 'The x-tenant header is required: the request names no tenant'),
  foreign: () => authError('GRANT_OF_OTHER_TENANT', 'The grant does not belong to this tenant'),
};

export interface AuthRouteDeps {
  login: ReturnType<typeof passwordLogin>;
  completeSecondFactor: ReturnType<typeof secondFactorSignIn>;
  signup: ReturnType<typeof signup>;
  grants: Record<string, Grant>;
  /** The codes the grants beyond this module's raise (RFC 6749 5.2 and the device and exchange RFCs). */
  grantErrors: string[];
  sessions: SessionCommands;
  users: UserQueries;
  /** userinfo's claims from memory: it answers every token validation. */
  userinfo: UserinfoClaims;
}

/** Login, signup, logout, userinfo and the OAuth 2.0 token endpoint (decisions.md, Logging in). */
export function registerAuthRoutes(app: HttpServer, deps: AuthRouteDeps): void {
  // RFC 6749 clients send application/x-www-form-urlencoded.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const tags = ['Authentication'];

  route(app, {
    tags,
    access: publicAccess,
    method: 'POST',
    url: '/api/auth/login',
    summary:
      'Password login: access token, refresh token and session; on an account with a second factor, {mfaRequired, mfaToken, availableMethods} ' +
      'and no tokens (complete with /api/auth/mfa/verify). 423 ACCOUNT_LOCKED with Retry-After while locked',
    body: loginBody,
    responses: { 200: okBody(signInSchema) },
    errors: ['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED'],
    handler: async (request) => {
      const { email, password } = request.body;
      return ok(signInData(await deps.login(tenantOf(request).name, email, password, commandContextOf(request))));
    },
  });

  route(app, {
    tags,
    access: publicAccess,
    method: 'POST',
    url: '/api/auth/mfa/verify',
    summary:
      "Completes a sign-in with a second factor: the login's mfaToken and a TOTP code or an unspent recovery code give the login data (acr aal2). " +
      'A wrong code is 400 INVALID_OTP and counts towards lockout like a wrong password; an unknown, used or expired mfaToken 401 MFA_TOKEN_INVALID',
    body: mfaVerifyBody,
    responses: { 200: okBody(issuedTokensSchema) },
    errors: ['INVALID_OTP', 'MFA_TOKEN_INVALID', 'ACCOUNT_LOCKED', 'INVALID_CREDENTIALS'],
    handler: async (request) => {
      const { mfaToken, method, code } = request.body;
      const { tokens } = await deps.completeSecondFactor(tenantOf(request).name, mfaToken, method, code, commandContextOf(request));
      return ok(tokens);
    },
  });

  route(app, {
    tags,
    access: publicAccess,
    method: 'POST',
    url: '/api/auth/signup',
    summary: 'Self-service signup: a `user`-role account, signed in at once (403 SIGNUP_DISABLED when the tenant closed it)',
    body: signupBody,
    responses: { 201: okBody(issuedTokensSchema.extend({ user: userDetailSchema })) },
    errors: ['SIGNUP_DISABLED', 'EMAIL_TAKEN', 'USERNAME_TAKEN'],
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const { userId, user, createdAt, tokens } = await deps.signup(tenant, request.body, commandContextOf(request));
      // The read model's view (with the login just made); the created state if it lags past the bound.
      return ok({ user: (await deps.users.get(tenant, userId)) ?? createdUserView(user, createdAt), ...tokens });
    },
  });

  route(app, {
    tags,
    access: authenticated,
    method: 'POST',
    url: '/api/auth/logout',
    summary: "Revoke the token's session (x-tenant optional: the token's tenant)",
    tenant: 'credential',
    responses: { 200: okBody(z.object({ loggedOut: z.literal(true) })) },
    handler: async (request) => {
      const { sessionId } = principalOf(request);
      if (sessionId) await deps.sessions.revoke(tenantOf(request).name, sessionId, 'logout', commandContextOf(request));
      return ok({ loggedOut: true } as const);
    },
  });

  // OIDC Core 5.3.1: the userinfo endpoint answers GET and POST alike (the token in the Authorization header).
  for (const method of ['GET', 'POST'] as const) {
    route(app, {
      tags,
      access: authenticated,
      method,
      url: '/api/auth/validate',
      summary: "OIDC userinfo: bare claims of the bearer token's user (x-tenant optional: the token's tenant)",
      tenant: 'credential',
      readOnly: true,
      responses: { 200: userinfoSchema },
      // Without a promise once the user and the roles are in memory: every token validation comes here.
      handler: (request) => {
        const principal = principalOf(request);
        const claims = deps.userinfo(principal.tenant, principal.subject);
        const { scope } = principal.claims as { scope?: unknown };
        return claims instanceof Promise ? claims.then((loaded) => released(existingUser(loaded), scope)) : released(existingUser(claims), scope);
      },
    });
  }

  route(app, {
    tags,
    access: publicAccess,
    method: 'POST',
    url: '/api/auth/token',
    summary:
      'OAuth 2.0 token endpoint (RFC 6749): form or JSON; grant_type refresh_token rotates the refresh token. Clients authenticate ' +
      'with client_secret_basic, client_secret_post, or none (public clients). x-tenant is optional: the refresh token, code or ' +
      'client_id names its tenant (a different x-tenant: 401 invalid_grant)',
    body: tokenBody,
    envelope: 'oauth',
    tenant: 'credential',
    responses: { 200: tokenResponseSchema },
    // Grants that change no state (client_credentials) keep no write log.
    readOnly: (request) => deps.grants[request.body.grant_type ?? '']?.appendsNothing === true,
    errors: ['invalid_request', 'unsupported_grant_type', 'invalid_grant', 'GRANT_OF_OTHER_TENANT', ...deps.grantErrors],
    handler: async (request, reply) => {
      const grantType = request.body.grant_type;
      if (!grantType) throw authError('invalid_request', 'The grant_type parameter is required');
      const grant = Object.hasOwn(deps.grants, grantType) ? deps.grants[grantType] : undefined;
      if (!grant) throw authError('unsupported_grant_type', `Unsupported grant_type ${grantType}`);
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const params = withClientCredentials(request.body, request.headers.authorization);
      const tenant = await adoptTenant(request, grant.tenantNamedBy(params), grantTenantErrors);
      try {
        const { response } = await grant.handle(params, tenant.name, commandContextOf(request));
        return { ...response };
      } catch (error) {
        // RFC 6749 5.2: a client that authenticated with the Authorization header is told the scheme.
        if ((error as { code?: string }).code === 'invalid_client' && params.client_auth_method === 'client_secret_basic') {
          void reply.header('www-authenticate', 'Basic realm="token"');
        }
        throw error;
      }
    },
  });
}

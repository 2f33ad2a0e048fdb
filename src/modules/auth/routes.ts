import { z } from 'zod';
import { AppError } from '../../platform/errors.ts';
import { principalOf, requireAuthentication } from '../../platform/http/authentication.ts';
import { ok } from '../../platform/http/envelopes.ts';
import { commandContextOf, type ReadYourWrites } from '../../platform/http/request-context.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { adoptTenant, tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { SessionCommands } from '../sessions/commands.ts';
import type { UserQueries } from '../users/queries.ts';
import { emailSchema, nameSchema, passwordSchema, usernameSchema } from '../users/schemas.ts';
import type { passwordLogin } from './login.ts';
import type { signup } from './signup.ts';
import type { grantRegistry } from './token-endpoint.ts';

const loginBody = z.strictObject({ email: z.string().trim().min(1).max(254), password: passwordSchema });
const signupBody = z.strictObject({
  email: emailSchema,
  password: passwordSchema,
  username: usernameSchema.optional(),
  firstName: nameSchema.optional(),
  lastName: nameSchema.optional(),
});
const tokenBody = z.record(z.string(), z.string().max(4096));

export interface AuthRouteDeps {
  login: ReturnType<typeof passwordLogin>;
  signup: ReturnType<typeof signup>;
  grants: ReturnType<typeof grantRegistry>;
  sessions: SessionCommands;
  users: UserQueries;
  readYourWrites: ReadYourWrites;
}

/** Login, signup, logout, userinfo and the OAuth 2.0 token endpoint (decisions.md, Logging in). */
export function registerAuthRoutes(app: HttpServer, deps: AuthRouteDeps): void {
  // RFC 6749 clients send application/x-www-form-urlencoded.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.post(
    '/api/auth/login',
    { schema: { tags: ['Authentication'], summary: 'Password login: access token, refresh token and session (423 ACCOUNT_LOCKED with Retry-After while locked)', body: loginBody } },
    async (request) => {
      const { email, password } = request.body;
      const { tokens, position } = await deps.login(tenantOf(request).name, email, password, commandContextOf(request));
      await deps.readYourWrites(position, ['sessions', 'users']);
      return ok(tokens);
    },
  );

  app.post(
    '/api/auth/signup',
    { schema: { tags: ['Authentication'], summary: 'Self-service signup: a `user`-role account, signed in at once (403 SIGNUP_DISABLED when the tenant closed it)', body: signupBody } },
    async (request, reply) => {
      const tenant = tenantOf(request).name;
      const { userId, tokens, position } = await deps.signup(tenant, request.body, commandContextOf(request));
      await deps.readYourWrites(position, ['sessions', 'users']);
      const user = await deps.users.get(tenant, userId);
      return reply.status(201).send(ok({ user, ...tokens }));
    },
  );

  app.post(
    '/api/auth/logout',
    {
      schema: { tags: ['Authentication'], summary: "Revoke the token's session (x-tenant optional: the token's tenant)", security: [{ bearer: [] }] },
      config: { tenant: 'credential' },
      onRequest: [requireAuthentication],
    },
    async (request) => {
      const { sessionId } = principalOf(request);
      if (sessionId) {
        const { position } = await deps.sessions.revoke(tenantOf(request).name, sessionId, 'logout', commandContextOf(request));
        await deps.readYourWrites(position, ['sessions']);
      }
      return ok({ loggedOut: true });
    },
  );

  app.get(
    '/api/auth/validate',
    {
      schema: { tags: ['Authentication'], summary: "OIDC userinfo: bare claims of the bearer token's user (x-tenant optional: the token's tenant)", security: [{ bearer: [] }] },
      config: { tenant: 'credential' },
      onRequest: [requireAuthentication],
    },
    async (request) => {
      const principal = principalOf(request);
      const user = await deps.users.get(principal.tenant, principal.subject);
      if (!user) throw new AppError('TOKEN_INVALID', 401, 'The token does not name an existing user');
      return {
        sub: user.id,
        email: user.email,
        email_verified: user.emailVerified,
        given_name: user.firstName,
        family_name: user.lastName,
        preferred_username: user.username ?? user.email,
        tenant: principal.tenant,
        roles: user.roles,
      };
    },
  );

  app.post(
    '/api/auth/token',
    {
      schema: {
        tags: ['Authentication'],
        summary:
          'OAuth 2.0 token endpoint (RFC 6749): form or JSON; grant_type refresh_token rotates the refresh token. x-tenant is optional: ' +
          'the refresh token names its tenant (a different x-tenant: 401 invalid_grant)',
        body: tokenBody,
      },
      config: { errorEnvelope: 'oauth', tenant: 'credential' },
    },
    async (request, reply) => {
      const grantType = request.body.grant_type;
      if (!grantType) throw new AppError('invalid_request', 400, 'The grant_type parameter is required');
      const grant = Object.hasOwn(deps.grants, grantType) ? deps.grants[grantType] : undefined;
      if (!grant) throw new AppError('unsupported_grant_type', 400, `Unsupported grant_type ${grantType}`);
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const tenant = await adoptTenant(request, grant.tenantNamedBy(request.body), {
        missing: () => new AppError('invalid_request', 400, 'The x-tenant header is required: the request names no tenant'),
        foreign: () => new AppError('invalid_grant', 401, 'The grant does not belong to this tenant'),
      });
      const { response, position } = await grant.handle(request.body, tenant.name, commandContextOf(request));
      await deps.readYourWrites(position, ['sessions']);
      return response;
    },
  );
}

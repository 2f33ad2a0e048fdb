import { z } from 'zod';
import { AppError } from '../../platform/errors.ts';
import { principalOf, requireAuthentication } from '../../platform/http/authentication.ts';
import { ok } from '../../platform/http/envelopes.ts';
import { commandContextOf, type ReadYourWrites } from '../../platform/http/request-context.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { SessionCommands } from '../sessions/commands.ts';
import { MAX_PASSWORD_LENGTH } from '../users/passwords.ts';
import type { passwordLogin } from './login.ts';
import type { grantRegistry } from './token-endpoint.ts';

const loginBody = z.strictObject({
  email: z.string().trim().min(1).max(254),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
});
const tokenBody = z.record(z.string(), z.string().max(4096));

export interface AuthRouteDeps {
  login: ReturnType<typeof passwordLogin>;
  grants: ReturnType<typeof grantRegistry>;
  sessions: SessionCommands;
  readYourWrites: ReadYourWrites;
}

/** Login, logout and the OAuth 2.0 token endpoint (decisions.md, Logging in). */
export function registerAuthRoutes(app: HttpServer, deps: AuthRouteDeps): void {
  // RFC 6749 clients send application/x-www-form-urlencoded.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.post(
    '/api/auth/login',
    { schema: { tags: ['Authentication'], summary: 'Password login: access token, refresh token and session', body: loginBody } },
    async (request) => {
      const { email, password } = request.body;
      const { tokens, position } = await deps.login(tenantOf(request).name, email, password, commandContextOf(request));
      await deps.readYourWrites(position, ['sessions', 'users']);
      return ok(tokens);
    },
  );

  app.post(
    '/api/auth/logout',
    { schema: { tags: ['Authentication'], summary: "Revoke the token's session", security: [{ bearer: [] }] }, onRequest: [requireAuthentication] },
    async (request) => {
      const { sessionId } = principalOf(request);
      if (sessionId) {
        const { position } = await deps.sessions.revoke(tenantOf(request).name, sessionId, 'logout', commandContextOf(request));
        await deps.readYourWrites(position, ['sessions']);
      }
      return ok({ loggedOut: true });
    },
  );

  app.post(
    '/api/auth/token',
    {
      schema: {
        tags: ['Authentication'],
        summary: 'OAuth 2.0 token endpoint (RFC 6749): form or JSON; grant_type refresh_token rotates the refresh token',
        body: tokenBody,
      },
      config: { errorEnvelope: 'oauth' },
    },
    async (request, reply) => {
      const grantType = request.body.grant_type;
      if (!grantType) throw new AppError('invalid_request', 400, 'The grant_type parameter is required');
      const grant = Object.hasOwn(deps.grants, grantType) ? deps.grants[grantType] : undefined;
      if (!grant) throw new AppError('unsupported_grant_type', 400, `Unsupported grant_type ${grantType}`);
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const { response, position } = await grant(request.body, tenantOf(request).name, commandContextOf(request));
      await deps.readYourWrites(position, ['sessions']);
      return response;
    },
  );
}

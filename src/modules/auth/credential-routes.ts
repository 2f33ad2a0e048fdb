import { z } from 'zod';
import { principalOf, requireAuthentication, requirePermission } from '../../platform/http/authentication.ts';
import { ok } from '../../platform/http/envelopes.ts';
import { commandContextOf, type ReadYourWrites } from '../../platform/http/request-context.ts';
import { idParams } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { passwordSchema } from '../users/schemas.ts';
import type { LockoutCommands } from './lockout.ts';
import type { magicLinks } from './magic-link.ts';
import type { PasswordFlows } from './password-flows.ts';

const emailBody = z.strictObject({ email: z.string().trim().min(1).max(254) });
const tokenSchema = z.string().min(1).max(200);

export interface CredentialRouteDeps {
  passwords: PasswordFlows;
  magicLinks: ReturnType<typeof magicLinks>;
  lockout: LockoutCommands;
  readYourWrites: ReadYourWrites;
}

/** Password change, forgot / reset, magic links, and the administrator's unlock. */
export function registerCredentialRoutes(app: HttpServer, deps: CredentialRouteDeps): void {
  const tags = ['Authentication'];

  app.post(
    '/api/auth/change-password',
    {
      schema: {
        tags,
        summary: "Change one's password (current + new); the tenant policy and history apply; the user's other sessions end",
        security: [{ bearer: [] }],
        body: z.strictObject({ currentPassword: passwordSchema, newPassword: passwordSchema }),
      },
      onRequest: [requireAuthentication],
    },
    async (request) => {
      const { subject, sessionId } = principalOf(request);
      const { currentPassword, newPassword } = request.body;
      const context = commandContextOf(request);
      const { position } = await deps.passwords.change(tenantOf(request).name, { userId: subject, sessionId }, currentPassword, newPassword, context);
      await deps.readYourWrites(position, ['sessions']);
      return ok({ changed: true });
    },
  );

  app.post(
    '/api/auth/forgot-password',
    { schema: { tags, summary: 'E-mail a single-use reset link (30 minutes); the answer is the same whether or not the account exists', body: emailBody } },
    async (request) => {
      deps.passwords.requestReset(tenantOf(request).name, request.body.email, commandContextOf(request));
      return ok({ sent: true });
    },
  );

  app.post(
    '/api/auth/reset-password',
    {
      schema: {
        tags,
        summary: 'Set a new password with a reset link token: every session ends and a lockout is lifted (TOKEN_INVALID / TOKEN_EXPIRED 400)',
        body: z.strictObject({ token: tokenSchema, newPassword: passwordSchema }),
      },
    },
    async (request) => {
      const { position } = await deps.passwords.completeReset(tenantOf(request).name, request.body.token, request.body.newPassword, commandContextOf(request));
      await deps.readYourWrites(position, ['sessions', 'users']);
      return ok({ reset: true });
    },
  );

  app.post(
    '/api/auth/magic-link',
    { schema: { tags, summary: 'E-mail a single-use sign-in link (15 minutes); the answer is the same whether or not the account exists', body: emailBody } },
    async (request) => {
      deps.magicLinks.request(tenantOf(request).name, request.body.email, commandContextOf(request));
      return ok({ sent: true });
    },
  );

  app.post(
    '/api/auth/magic-link/verify',
    { schema: { tags, summary: 'Exchange a magic-link token for the login response (TOKEN_INVALID / TOKEN_EXPIRED 400)', body: z.strictObject({ token: tokenSchema }) } },
    async (request) => {
      const { tokens, position } = await deps.magicLinks.consume(tenantOf(request).name, request.body.token, commandContextOf(request));
      await deps.readYourWrites(position, ['sessions', 'users']);
      return ok(tokens);
    },
  );

  app.post(
    '/api/users/:id/unlock',
    {
      schema: { tags: ['Users'], summary: 'Lift a lockout caused by failed logins (manage:users); a no-op when not locked', security: [{ bearer: [] }], params: idParams },
      onRequest: [requirePermission('manage:users')],
    },
    async (request) => {
      const { position } = await deps.lockout.unlock(tenantOf(request).name, request.params.id, commandContextOf(request));
      await deps.readYourWrites(position, ['users']);
      return ok({ unlocked: true });
    },
  );
}

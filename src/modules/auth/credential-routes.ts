import { passwordSchema } from '../users/index.ts';
import { z } from 'zod';
import { principalOf } from '../../platform/http/authentication.ts';
import { ok, okBody } from '../../platform/http/envelopes.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { authenticated, permission, publicAccess, route } from '../../platform/http/route.ts';
import { idParams } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { LockoutCommands } from './lockout.ts';
import type { magicLinks } from './magic-link.ts';
import type { PasswordFlows } from './password-flows.ts';
import { signInData, signInSchema } from './routes.ts';

const emailBody = z.strictObject({ email: z.string().trim().min(1).max(254) });
const tokenSchema = z.string().min(1).max(200);
const done = <Key extends string>(key: Key) => okBody(z.object({ [key]: z.literal(true) } as Record<Key, z.ZodLiteral<true>>));
const LINK_ERRORS = ['LINK_INVALID', 'LINK_EXPIRED'];

export interface CredentialRouteDeps {
  passwords: PasswordFlows;
  magicLinks: ReturnType<typeof magicLinks>;
  lockout: LockoutCommands;
}

/** Password change, forgot / reset, magic links, and the administrator's unlock. */
export function registerCredentialRoutes(app: HttpServer, deps: CredentialRouteDeps): void {
  const tags = ['Authentication'];

  route(app, {
    tags,
    access: authenticated,
    method: 'POST',
    url: '/api/auth/change-password',
    summary:
      "Change one's password (current + new); the tenant policy and history apply; the user's other sessions end. " +
      'A wrong current password counts towards lockout, as at login (423 ACCOUNT_LOCKED with Retry-After while locked)',
    body: z.strictObject({ currentPassword: passwordSchema, newPassword: passwordSchema }),
    responses: { 200: done('changed') },
    errors: ['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'NOT_FOUND'],
    handler: async (request) => {
      const { subject, sessionId } = principalOf(request);
      const { currentPassword, newPassword } = request.body;
      await deps.passwords.change(tenantOf(request).name, { userId: subject, sessionId }, currentPassword, newPassword, commandContextOf(request));
      return ok({ changed: true } as const);
    },
  });

  route(app, {
    tags,
    access: publicAccess,
    method: 'POST',
    url: '/api/auth/forgot-password',
    summary: 'E-mail a single-use reset link (30 minutes); the answer is the same whether or not the account exists',
    body: emailBody,
    responses: { 200: done('sent') },
    handler: async (request) => {
      deps.passwords.requestReset(tenantOf(request).name, request.body.email, commandContextOf(request));
      return ok({ sent: true } as const);
    },
  });

  route(app, {
    tags,
    access: publicAccess,
    method: 'POST',
    url: '/api/auth/reset-password',
    summary: 'Set a new password with a reset link token: every session ends and a lockout is lifted (TOKEN_INVALID / TOKEN_EXPIRED 400)',
    body: z.strictObject({ token: tokenSchema, newPassword: passwordSchema }),
    responses: { 200: done('reset') },
    errors: LINK_ERRORS,
    handler: async (request) => {
      await deps.passwords.completeReset(tenantOf(request).name, request.body.token, request.body.newPassword, commandContextOf(request));
      return ok({ reset: true } as const);
    },
  });

  route(app, {
    tags,
    access: publicAccess,
    method: 'POST',
    url: '/api/auth/magic-link',
    summary: 'E-mail a single-use sign-in link (15 minutes); the answer is the same whether or not the account exists',
    body: emailBody,
    responses: { 200: done('sent') },
    handler: async (request) => {
      deps.magicLinks.request(tenantOf(request).name, request.body.email, commandContextOf(request));
      return ok({ sent: true } as const);
    },
  });

  route(app, {
    tags,
    access: publicAccess,
    method: 'POST',
    url: '/api/auth/magic-link/verify',
    summary:
      'Exchange a magic-link token for the login response, or for the second factor\'s challenge on an account with one, as login ' +
      '(TOKEN_INVALID / TOKEN_EXPIRED 400)',
    body: z.strictObject({ token: tokenSchema }),
    responses: { 200: okBody(signInSchema) },
    errors: [...LINK_ERRORS, 'ACCOUNT_LOCKED', 'INVALID_CREDENTIALS'],
    handler: async (request) => ok(signInData(await deps.magicLinks.consume(tenantOf(request).name, request.body.token, commandContextOf(request)))),
  });

  route(app, {
    tags: ['Users'],
    access: permission('manage:users'),
    method: 'POST',
    url: '/api/users/:id/unlock',
    summary: 'Lift a lockout caused by failed logins (manage:users); a no-op when not locked',
    params: idParams,
    responses: { 200: done('unlocked') },
    errors: ['NOT_FOUND'],
    handler: async (request) => {
      await deps.lockout.unlock(tenantOf(request).name, request.params.id, commandContextOf(request));
      return ok({ unlocked: true } as const);
    },
  });
}

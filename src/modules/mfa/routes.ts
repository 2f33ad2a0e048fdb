import { z } from 'zod';
import type { TokenSubjects } from '../users/index.ts';
import { platformError } from '../../platform/errors.ts';
import { principalOf } from '../../platform/http/authentication.ts';
import { ok, okBody } from '../../platform/http/envelopes.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { authenticated, route } from '../../platform/http/route.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { FastifyRequest } from 'fastify';
import type { MfaCommands } from './commands.ts';

const codeBody = z.strictObject({ code: z.string().trim().min(1).max(64) });

export interface MfaRouteDeps {
  commands: MfaCommands;
  subjects: TokenSubjects;
}

/** TOTP enrolment of the caller's own account (decisions.md, Two-factor): setup, enable, disable. */
export function registerMfaRoutes(app: HttpServer, deps: MfaRouteDeps): void {
  const own = { tags: ['Two-factor'], access: authenticated };

  /** The account the token names: a client's token (no user) has none. */
  async function account(request: FastifyRequest) {
    const tenant = tenantOf(request).name;
    const user = await deps.subjects.get(tenant, principalOf(request).subject);
    if (!user) throw platformError('TOKEN_INVALID', 'The token does not name an existing user');
    return { tenant, user, context: commandContextOf(request) };
  }

  route(app, {
    ...own,
    method: 'POST',
    url: '/api/user/2fa/totp/setup',
    summary: 'Issues a new TOTP secret (RFC 6238: SHA-1, 6 digits, 30 s) for an authenticator app; it takes effect once enabled with a code',
    responses: { 200: okBody(z.object({ secret: z.string().describe('base32'), otpauthUrl: z.string() })) },
    errors: ['TOTP_ALREADY_ENABLED'],
    handler: async (request) => {
      const { tenant, user, context } = await account(request);
      return ok(await deps.commands.setup(tenant, user.userId, user.email, context));
    },
  });

  route(app, {
    ...own,
    method: 'POST',
    url: '/api/user/2fa/totp/enable',
    summary: 'Confirms the secret of the last setup with a current code: TOTP is on, and ten single-use recovery codes are shown once',
    body: codeBody,
    responses: { 200: okBody(z.object({ totpEnabled: z.literal(true), recoveryCodes: z.array(z.string()) })) },
    errors: ['INVALID_OTP', 'TOTP_NOT_SET_UP', 'TOTP_ALREADY_ENABLED'],
    handler: async (request) => {
      const { tenant, user, context } = await account(request);
      return ok(await deps.commands.enable(tenant, user.userId, request.body.code, context));
    },
  });

  route(app, {
    ...own,
    method: 'POST',
    url: '/api/user/2fa/totp/disable',
    summary:
      'Turns TOTP off with a current TOTP code or an unspent recovery code; the secret and the recovery codes are void. ' +
      'A wrong code counts towards lockout (423 ACCOUNT_LOCKED with Retry-After while locked)',
    body: codeBody,
    responses: { 200: okBody(z.object({ totpEnabled: z.literal(false) })) },
    errors: ['INVALID_OTP', 'TOTP_NOT_ENABLED', 'ACCOUNT_LOCKED'],
    handler: async (request) => {
      const { tenant, user, context } = await account(request);
      return ok(await deps.commands.disable(tenant, user.userId, request.body.code, context));
    },
  });
}

import { z } from 'zod';
import { ok } from '../../platform/http/envelopes.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { MAX_PASSWORD_LENGTH } from '../users/passwords.ts';
import type { passwordLogin } from './login.ts';

const loginBody = z.strictObject({
  email: z.string().trim().min(1).max(254),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
});

/** POST /api/auth/login (decisions.md, Logging in). */
export function registerAuthRoutes(app: HttpServer, deps: { login: ReturnType<typeof passwordLogin> }): void {
  app.post(
    '/api/auth/login',
    { schema: { tags: ['Authentication'], summary: 'Password login: access token, refresh token and session', body: loginBody } },
    async (request) => {
      const { email, password } = request.body;
      return ok(await deps.login(tenantOf(request).name, email, password, commandContextOf(request)));
    },
  );
}

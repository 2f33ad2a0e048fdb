import { z } from 'zod';
import { tenantNamedByClientId, type Application, type ApplicationDirectory } from '../applications/index.ts';
import type { SessionCommands } from '../sessions/index.ts';
import { html, sendPage } from '../../platform/http/html.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { publicAccess, route } from '../../platform/http/route.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { redirectWith } from './authorization-request.ts';
import type { IdTokens } from './id-tokens.ts';
import { LOGOUT_PARAMETERS, queryParameters } from './query-parameters.ts';

export interface LogoutRouteDeps {
  applications: ApplicationDirectory;
  sessions: SessionCommands;
  idTokens: IdTokens;
}

const htmlPage = z.string().describe('a self-contained HTML page');
const TITLE = 'Sign out';
const one = (value: string | string[] | undefined) => (typeof value === 'string' && value !== '' ? value : null);

/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) at end_session_endpoint
 * /api/oauth/logout: an id_token_hint of ours ends the session it names; post_logout_redirect_uri
 * must be registered by the client (named by the hint's audience or client_id) or the answer is a
 * page, never a redirect elsewhere. The service keeps no browser session, so without a hint
 * nothing is signed in here to end.
 */
export function registerLogoutRoutes(app: HttpServer, deps: LogoutRouteDeps): void {
  const problem = (reply: Parameters<typeof sendPage>[0], message: string, status = 400) => sendPage(reply, status, TITLE, html`<p class="error" role="alert">${message}</p>`);

  for (const method of ['GET', 'POST'] as const) {
    route(app, {
      tags: ['OAuth'],
      access: publicAccess,
      tenant: 'credential',
      method,
      url: '/api/oauth/logout',
      summary: 'OIDC end_session_endpoint: id_token_hint, post_logout_redirect_uri (registered), state, client_id; ends the session of the hint. x-tenant optional (another tenant than the client\'s: a 401 page)',
      contentType: 'text/html',
      ...(method === 'GET'
        ? { query: queryParameters(LOGOUT_PARAMETERS, 8192) }
        : { body: z.record(z.string(), z.string().max(8192)) }),
      responses: { 200: htmlPage, 302: z.string().describe('redirect to post_logout_redirect_uri with state'), 400: htmlPage, 401: htmlPage },
      handler: async (request, reply) => {
        const params = (method === 'GET' ? request.query : request.body) as Record<string, string | string[] | undefined>;
        const hintText = one(params.id_token_hint);
        const hint = hintText ? await deps.idTokens.verifyHint(hintText) : null;
        if (hintText && !hint) return problem(reply, 'The sign-out request is not valid.');
        const clientId = hint?.aud ?? one(params.client_id);
        if (hint && one(params.client_id) && one(params.client_id) !== hint.aud) return problem(reply, 'The sign-out request names two different applications.');
        const tenantName = tenantNamedByClientId(clientId ?? undefined);
        // x-tenant, when sent, must name the client's tenant (decisions.md: else 401); nothing ends.
        if (request.tenant && tenantName && request.tenant.name !== tenantName) return problem(reply, 'The sign-out request names another tenant.', 401);
        const tenant = tenantName ? await request.server.findTenant(tenantName) : null;
        const application: Application | null = tenant && clientId ? await deps.applications.byClientId(tenant.name, clientId) : null;
        const redirectUri = one(params.post_logout_redirect_uri);
        if (redirectUri && !application?.postLogoutRedirectUris.includes(redirectUri)) {
          return problem(reply, 'The address this application asked to return to after signing out is not registered for it.');
        }
        if (hint?.sid && tenant) {
          request.tenant = tenant;
          await deps.sessions.revoke(tenant.name, hint.sid, 'logout', { ...commandContextOf(request), actor: hint.sub });
        }
        if (redirectUri) return reply.redirect(redirectWith(redirectUri, { state: one(params.state) }), 302);
        return sendPage(reply, 200, 'You are signed out', html`<p>You are signed out. You can close this page.</p>`);
      },
    });
  }
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import { z } from 'zod';
import { tenantNamedByClientId, type ApplicationDirectory } from '../applications/index.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { FormCsrf } from '../../platform/http/form-csrf.ts';
import { html, sendPage } from '../../platform/http/html.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { publicAccess, route } from '../../platform/http/route.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import type { Clock } from '../../platform/clock.ts';
import { checkAuthorizationRequest, redirectUriRegistered, redirectWith, type AuthorizationRequest } from './authorization-request.ts';
import type { CodeCommands } from './codes.ts';
import { formSignIn, signInFields, type FormSignInDeps } from './form-sign-in.ts';
import { AUTHORIZE_PARAMETERS, queryParameters } from './query-parameters.ts';

export interface AuthorizationRouteDeps extends FormSignInDeps {
  applications: ApplicationDirectory;
  codes: CodeCommands;
  csrf: FormCsrf;
  secretBox: SecretBox;
  clock: Clock;
  issuer: string;
}

const htmlPage = z.string().describe('a self-contained HTML page');
const redirect = z.string().describe('redirect to redirect_uri with code, state and iss, or with error, error_description, state and iss');
const TITLE = 'Sign in';
const PURPOSE = 'oauth-authenticate';

/** The origin a redirect goes to, as a CSP source (a private-use scheme is its own source). */
const cspSourceOf = (uri: string) => {
  const url = new URL(uri);
  return url.origin === 'null' ? url.protocol : url.origin;
};

/**
 * GET /api/oauth/authorize (the service's own sign-in page) and POST /api/oauth/authenticate
 * (its form), decisions.md, OAuth 2.0. The page is plain HTML (no script, no external asset); the
 * form carries the checked request sealed by the master key (request_id: nothing to store, nothing
 * to alter) and a signed double-submit CSRF value bound to it.
 */
export function registerAuthorizationRoutes(app: HttpServer, deps: AuthorizationRouteDeps): void {
  const tags = ['OAuth'];
  const problemPage = (reply: FastifyReply, status: number, message: string) => sendPage(reply, status, TITLE, html`<p class="error" role="alert">${message}</p>`);

  const signIn = formSignIn(deps);

  /** The sign-in form: e-mail and password, or (with `mfaToken`) the second factor's code. */
  function signInForm(request: FastifyRequest, reply: FastifyReply, requestId: string, redirectUri: string, status = 200, problem?: string, mfaToken?: string) {
    const csrf = deps.csrf.issue(request, reply, [PURPOSE, requestId]);
    return sendPage(
      reply,
      status,
      TITLE,
      html`${problem ? html`<p class="error" role="alert">${problem}</p>` : ''}<form method="post" action="/api/oauth/authenticate">
<input type="hidden" name="request_id" value="${requestId}"><input type="hidden" name="csrf" value="${csrf}">
${signInFields(mfaToken)}
<button type="submit">${mfaToken ? 'Verify' : 'Sign in'}</button></form>`,
      { formActions: [cspSourceOf(redirectUri)] },
    );
  }

  /** The sealed request of a posted form, or null when it is not ours or has expired. */
  function openRequest(requestId: string | undefined): AuthorizationRequest | null {
    if (!requestId || requestId.length > 8192) return null;
    try {
      const request = JSON.parse(deps.secretBox.open(requestId)) as AuthorizationRequest;
      return request.expiresAt > deps.clock.now().getTime() ? request : null;
    } catch {
      return null;
    }
  }

  route(app, {
    tags,
    access: publicAccess,
    tenant: 'credential',
    method: 'GET',
    url: '/api/oauth/authorize',
    summary:
      'OAuth 2.0 authorization endpoint (code + PKCE): the sign-in page. An unknown client or unregistered redirect_uri: a 400 page; ' +
      'other problems redirect with error and state (RFC 6749 4.1.2.1). x-tenant optional (the client_id names the tenant)',
    contentType: 'text/html',
    query: queryParameters(AUTHORIZE_PARAMETERS, 4096),
    responses: { 200: htmlPage, 302: redirect, 400: htmlPage, 401: htmlPage },
    handler: async (request, reply) => {
      const query = request.query;
      const clientId = typeof query.client_id === 'string' ? query.client_id : undefined;
      const named = tenantNamedByClientId(clientId);
      // x-tenant, when sent, must name the client's tenant (decisions.md: else 401); never a redirect.
      if (request.tenant && named && request.tenant.name !== named) return problemPage(reply, 401, 'This application is not known here.');
      const tenant = named ? await request.server.findTenant(named) : null;
      const application = tenant && clientId ? await deps.applications.byClientId(tenant.name, clientId) : null;
      const outcome = checkAuthorizationRequest(query, application, tenant?.name ?? '', deps.clock.now().getTime());
      switch (outcome.kind) {
        case 'page':
          return problemPage(reply, 400, outcome.message);
        case 'redirect-error':
          return reply.redirect(
            redirectWith(outcome.redirectUri, { error: outcome.error, error_description: outcome.description, state: outcome.state, iss: deps.issuer }),
            302,
          );
        case 'sign-in':
          return signInForm(request, reply, deps.secretBox.seal(JSON.stringify(outcome.request)), outcome.request.redirectUri);
      }
    },
  });

  route(app, {
    tags,
    access: publicAccess,
    tenant: 'none',
    method: 'POST',
    url: '/api/oauth/authenticate',
    summary:
      "The sign-in page's form (request_id, csrf, then email and password, or mfa_token and code): signs in and redirects to redirect_uri " +
      'with code, state and iss; an account with a second factor gets the code form (200); wrong credentials or a wrong code show the form ' +
      'again (401), a locked account 423, an expired form or request a 400/403 page',
    contentType: 'text/html',
    body: z.record(z.string(), z.string().max(8192)),
    responses: { 302: redirect, 400: htmlPage, 401: htmlPage, 403: htmlPage, 423: htmlPage },
    handler: async (request, reply) => {
      const fields = request.body;
      const authorization = openRequest(fields.request_id);
      if (!authorization) return problemPage(reply, 400, 'This sign-in request has expired or is not valid. Return to the application and start again.');
      if (!deps.csrf.verify(request, [PURPOSE, fields.request_id!], fields.csrf)) {
        return problemPage(reply, 403, 'This form has expired. Return to the application and start again.');
      }
      const tenant = await request.server.findTenant(authorization.tenant);
      const application = tenant ? await deps.applications.byClientId(tenant.name, authorization.clientId) : null;
      if (!tenant || !application) return problemPage(reply, 400, 'This application is no longer known.');
      // The registration as it is now, not as it was when the form was sealed (up to 10 minutes ago): an address
      // unregistered meanwhile gets no code (RFC 9700 4.1).
      if (!redirectUriRegistered(application, authorization.redirectUri)) {
        return problemPage(reply, 400, 'The address this application asked to return to is no longer registered for it.');
      }
      request.tenant = tenant;
      const context = commandContextOf(request);
      const issued = await signIn(tenant.name, fields, context);
      if (issued.step === 'code') return signInForm(request, reply, fields.request_id!, authorization.redirectUri, issued.status, issued.problem, issued.mfaToken);
      if (issued.step === 'credentials') return signInForm(request, reply, fields.request_id!, authorization.redirectUri, issued.status, issued.problem);
      // The claims of the token the login just issued: who signed in, how, in which session.
      const claims = decodeJwt(issued.tokens.accessToken) as { sub: string; acr: string; amr: string[] };
      const code = await deps.codes.issue(
        tenant.name,
        {
          sessionId: issued.tokens.sessionId,
          userId: claims.sub,
          clientId: authorization.clientId,
          redirectUri: authorization.redirectUri,
          scope: authorization.scope,
          nonce: authorization.nonce,
          codeChallenge: authorization.codeChallenge,
          authTime: deps.clock.now().toISOString(),
          acr: claims.acr,
          amr: claims.amr,
          sealedRefreshToken: deps.secretBox.seal(issued.tokens.refreshToken),
        },
        { ...context, actor: claims.sub },
      );
      return reply.redirect(redirectWith(authorization.redirectUri, { code, state: authorization.state, iss: deps.issuer }), 302);
    },
  });
}

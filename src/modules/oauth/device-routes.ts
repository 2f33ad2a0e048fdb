import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import { z } from 'zod';
import { GRANT_TYPES, tenantNamedByClientId, type ApplicationDirectory } from '../applications/index.ts';
import { withClientCredentials } from '../auth/index.ts';
import type { SessionCommands } from '../sessions/index.ts';
import { notFound, platformError } from '../../platform/errors.ts';
import { principalOf } from '../../platform/http/authentication.ts';
import { ok, okBody } from '../../platform/http/envelopes.ts';
import type { FormCsrf } from '../../platform/http/form-csrf.ts';
import { html, sendPage } from '../../platform/http/html.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { authenticated, publicAccess, route } from '../../platform/http/route.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { adoptTenant } from '../../platform/http/tenant-resolution.ts';
import { AUTHORIZE_SCOPES } from './authorization-request.ts';
import { assertGrantAllowed, authenticateClient } from './client-authentication.ts';
import { DEVICE_CODE_LIFETIME_S, DEVICE_POLL_INTERVAL_S, displayedUserCode, normalizedUserCode, type DeviceFlow } from './device-flow.ts';
import { oauthError } from './errors.ts';
import { formSignIn, signInFields, type FormSignInDeps } from './form-sign-in.ts';
import { grantedScopes, scopeList } from './scopes.ts';

export interface DeviceRouteDeps extends FormSignInDeps {
  applications: ApplicationDirectory;
  devices: DeviceFlow;
  sessions: SessionCommands;
  csrf: FormCsrf;
  issuer: string;
}

const htmlPage = z.string().describe('a self-contained HTML page');
const TITLE = 'Connect a device';
const PURPOSE = 'oauth-device';

/**
 * RFC 8628: the device authorization endpoint, the verification page (sign in, then approve or
 * deny; plain HTML, CSRF-bound) and the JSON approval of a signed-in client (decisions.md).
 */
export function registerDeviceRoutes(app: HttpServer, deps: DeviceRouteDeps): void {
  const verificationUri = `${deps.issuer}/api/oauth/device`;

  route(app, {
    tags: ['OAuth'],
    access: publicAccess,
    tenant: 'credential',
    envelope: 'oauth',
    method: 'POST',
    url: '/api/oauth/device_authorization',
    summary: 'RFC 8628 device authorization (client_id, scope; confidential clients authenticate as at the token endpoint)',
    body: z.record(z.string(), z.string().max(4096)),
    responses: {
      200: z.object({
        device_code: z.string(),
        user_code: z.string().describe('XXXX-XXXX'),
        verification_uri: z.string(),
        verification_uri_complete: z.string(),
        expires_in: z.number().int(),
        interval: z.number().int(),
      }),
    },
    errors: ['invalid_request', 'invalid_client', 'unauthorized_client', 'invalid_scope'],
    handler: async (request, reply) => {
      const params = withClientCredentials(request.body, request.headers.authorization);
      const tenant = await adoptTenant(request, tenantNamedByClientId(params.client_id), {
        missing: () => oauthError('invalid_client', 'The client_id parameter is required'),
        foreign: () => oauthError('invalid_client', 'Client authentication failed'),
      });
      const application = await authenticateClient(deps.applications, tenant.name, params);
      assertGrantAllowed(application, GRANT_TYPES.deviceCode);
      const scope = grantedScopes(params.scope, AUTHORIZE_SCOPES, ['openid']);
      const { userCode, deviceCode } = await deps.devices.start(application, scope, commandContextOf(request));
      void reply.header('cache-control', 'no-store');
      const shown = displayedUserCode(userCode);
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${shown}`,
        expires_in: DEVICE_CODE_LIFETIME_S,
        interval: DEVICE_POLL_INTERVAL_S,
      };
    },
  });

  const signIn = formSignIn(deps);

  /** The verification form: the user code and e-mail and password, or (with `mfaToken`) the second factor's code. */
  /**
   * What a pending user code asks (RFC 8628 3.3, 5.4: the user reviews the request; a phishing link
   * is this very page): the application's name and the scope, or nothing for an unknown code.
   */
  async function requestOf(typed: string) {
    const userCode = normalizedUserCode(typed);
    const pending = userCode ? await deps.devices.pending(userCode) : null;
    const tenant = pending ? tenantNamedByClientId(pending.clientId) : null;
    const application = pending && tenant ? await deps.applications.byClientId(tenant, pending.clientId) : null;
    return application && pending ? html`<p>The application <strong>${application.name}</strong> asks for: ${pending.scope.join(' ')}.</p>` : '';
  }

  async function verificationForm(request: FastifyRequest, reply: FastifyReply, userCode: string, status = 200, problem?: string, mfaToken?: string) {
    const asking = await requestOf(userCode);
    const csrf = deps.csrf.issue(request, reply, [PURPOSE]);
    const userCodeField = mfaToken
      ? html`<input type="hidden" name="user_code" value="${userCode}">`
      : html`<label for="user_code">Code</label><input id="user_code" name="user_code" value="${userCode}" required maxlength="16" autocomplete="off">`;
    return sendPage(
      reply,
      status,
      TITLE,
      html`${problem ? html`<p class="error" role="alert">${problem}</p>` : ''}<p>Check that this code is the one your device shows, then sign in to connect it.</p>${asking}
<form method="post" action="/api/oauth/device"><input type="hidden" name="csrf" value="${csrf}">
${userCodeField}
${signInFields(mfaToken)}
<button type="submit" name="decision" value="approve">Connect the device</button> <button type="submit" name="decision" value="deny">Deny</button></form>`,
    );
  }

  route(app, {
    tags: ['OAuth'],
    access: publicAccess,
    tenant: 'none',
    method: 'GET',
    url: '/api/oauth/device',
    summary: 'The RFC 8628 verification page (?user_code= prefilled): enter the code, sign in, approve or deny',
    contentType: 'text/html',
    query: z.object({ user_code: z.string().max(32).optional() }),
    responses: { 200: htmlPage },
    handler: async (request, reply) => verificationForm(request, reply, request.query.user_code ?? ''),
  });

  route(app, {
    tags: ['OAuth'],
    access: publicAccess,
    tenant: 'none',
    method: 'POST',
    url: '/api/oauth/device',
    summary:
      "The verification page's form (csrf, user_code, email and password, or mfa_token and code, decision approve|deny); " +
      'an account with a second factor gets the code form first',
    contentType: 'text/html',
    body: z.record(z.string(), z.string().max(1024)),
    responses: { 200: htmlPage, 400: htmlPage, 401: htmlPage, 403: htmlPage, 423: htmlPage },
    handler: async (request, reply) => {
      const fields = request.body;
      const typed = fields.user_code ?? '';
      if (!deps.csrf.verify(request, [PURPOSE], fields.csrf)) return verificationForm(request, reply, typed, 403, 'This form has expired. Please try again.');
      const userCode = normalizedUserCode(typed);
      const pending = userCode ? await deps.devices.pending(userCode) : null;
      const tenant = pending ? await request.server.findTenant(tenantNamedByClientId(pending.clientId) ?? '') : null;
      if (!userCode || !pending || !tenant) return verificationForm(request, reply, typed, 400, 'This code is not valid or has expired. Check the code your device shows.');
      request.tenant = tenant;
      const context = commandContextOf(request);
      const issued = await signIn(tenant.name, fields, context);
      if (issued.step !== 'signed-in') return verificationForm(request, reply, typed, issued.status, issued.problem, issued.step === 'code' ? issued.mfaToken : undefined);
      const claims = decodeJwt(issued.tokens.accessToken) as { sub: string; acr: string; amr: string[] };
      const approve = fields.decision === 'approve';
      const session = { sessionId: issued.tokens.sessionId, refreshToken: issued.tokens.refreshToken };
      await deps.devices.decide(tenant.name, userCode, approve, { userId: claims.sub, acr: claims.acr, amr: claims.amr }, { ...context, actor: claims.sub }, session);
      // Denied: the sign-in served only to decide; its session ends.
      if (!approve) await deps.sessions.revoke(tenant.name, session.sessionId, 'logout', context);
      return sendPage(reply, 200, approve ? 'Device connected' : 'Device denied', html`<p>${approve ? 'Your device is connected. You can close this page.' : 'The device was not connected.'}</p>`);
    },
  });

  route(app, {
    tags: ['OAuth'],
    access: authenticated,
    tenant: 'credential',
    method: 'POST',
    url: '/api/oauth/device/verify',
    summary: "Approve or deny a device's user code as the signed-in user (x-tenant optional: the token's tenant)",
    body: z.strictObject({ userCode: z.string().min(1).max(32), approve: z.boolean() }),
    responses: { 200: okBody(z.object({ approved: z.boolean() })) },
    errors: ['NOT_FOUND', 'PERMISSION_DENIED'],
    handler: async (request) => {
      const principal = principalOf(request);
      const claims = principal.claims as { acr?: string; amr?: string[]; client_id?: string; scope?: unknown };
      // A client's own token is no user to approve for.
      if (claims.client_id === principal.subject) throw platformError('PERMISSION_DENIED', 'A user must approve a device');
      const userCode = normalizedUserCode(request.body.userCode);
      if (!userCode) throw notFound('User code');
      const scope = typeof claims.scope === 'string' ? scopeList(claims.scope) : null;
      const user = { userId: principal.subject, acr: claims.acr ?? 'aal1', amr: claims.amr ?? [], scope, tokenSession: principal.sessionId };
      await deps.devices.decide(principal.tenant, userCode, request.body.approve, user, commandContextOf(request));
      return ok({ approved: request.body.approve });
    },
  });
}

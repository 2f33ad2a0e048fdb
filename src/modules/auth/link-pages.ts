import { codeFields, codeMethod } from '../mfa/index.ts';
import { passwordSchema } from '../users/index.ts';
import { z } from 'zod';
import { DomainError } from '../../platform/errors.ts';
import type { FormCsrf } from '../../platform/http/form-csrf.ts';
import { html, sendPage, type SafeHtml } from '../../platform/http/html.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { publicAccess, route } from '../../platform/http/route.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { TENANT_NAME, type TenantRef } from '../../platform/http/tenant-resolution.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { secondFactorSignIn } from './second-factor-sign-in.ts';
import type { magicLinks } from './magic-link.ts';
import type { PasswordFlows } from './password-flows.ts';

export interface LinkPageDeps {
  passwords: PasswordFlows;
  magicLinks: ReturnType<typeof magicLinks>;
  completeSecondFactor: ReturnType<typeof secondFactorSignIn>;
  csrf: FormCsrf;
}

type Fields = Record<string, string | undefined>;

/** What every link page declares: no token or tenant header, HTML answers (a problem with the link is a 400 page, a stale form 403). */
const htmlPage = z.string().describe('a self-contained HTML page');
const PAGE = {
  tags: ['Pages'],
  access: publicAccess,
  tenant: 'none' as const,
  contentType: 'text/html',
  responses: { 200: htmlPage, 400: htmlPage, 403: htmlPage },
};
type Link = { tenant: TenantRef; token: string };

const LINK_PROBLEMS: Record<string, string> = {
  LINK_EXPIRED: 'This link has expired. Request a new one from the application.',
  LINK_INVALID: 'This link is not valid or has already been used. Request a new one from the application.',
  ACCOUNT_LOCKED: 'This account is locked after too many failed attempts. Try again later; the link stays usable until it expires.',
  INVALID_CREDENTIALS: 'This link cannot sign in this account.',
  MFA_TOKEN_INVALID: 'This sign-in has expired. Request a new link from the application.',
};

const hidden = (fields: Fields) => Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
const problems = (messages: string[]) => (messages.length ? html`<ul class="error" role="alert">${messages.map((m) => html`<li>${m}</li>`)}</ul>` : '');

/**
 * The pages that e-mailed links open (IAM_PUBLIC_URL/reset-password and /magic-link): plain HTML
 * forms that post to themselves and run the same code as the API. Neither spends a link on GET
 * (mail scanners prefetch links); every POST carries a signed double-submit CSRF value bound to
 * the link. Decisions in docs/decisions.md (Account lifecycle).
 */
export function registerLinkPages(app: HttpServer, deps: LinkPageDeps): void {
  /** The tenant and token a link names, with the tenant adopted as the request's; null when unusable. */
  async function linkOf(request: FastifyRequest, fields: Fields): Promise<Link | null> {
    const { tenant: name, token } = fields;
    if (!name || !token || token.length > 200 || !TENANT_NAME.test(name)) return null;
    const tenant = await request.server.findTenant(name);
    if (!tenant) return null;
    request.tenant = tenant;
    return { tenant, token };
  }

  const linkProblem = (reply: FastifyReply, title: string, code: string) =>
    sendPage(reply, 400, title, html`<p class="error" role="alert">${LINK_PROBLEMS[code] ?? LINK_PROBLEMS.LINK_INVALID}</p>`);

  /** A form page whose POST acts on the link: hidden tenant, token and CSRF value. */
  const form = (request: FastifyRequest, reply: FastifyReply, purpose: string, link: Link, inner: SafeHtml) => {
    const csrf = deps.csrf.issue(request, reply, [purpose, link.tenant.name, link.token]);
    return html`<form method="post" action="${purpose}">${hidden({ tenant: link.tenant.name, token: link.token, csrf })}${inner}</form>`;
  };

  /**
   * A POST on a link page: a usable link and a CSRF value of this browser for this link, then
   * `act`; a domain error of the link (expired, used, locked ...) becomes the page's message.
   */
  async function onPost(request: FastifyRequest, reply: FastifyReply, purpose: string, title: string, act: (link: Link, fields: Fields) => Promise<FastifyReply>) {
    const fields = (request.body ?? {}) as Fields;
    const link = await linkOf(request, fields);
    if (!link) return linkProblem(reply, title, 'LINK_INVALID');
    if (!deps.csrf.verify(request, [purpose, link.tenant.name, link.token], fields.csrf)) {
      return sendPage(reply, 403, title, html`<p class="error" role="alert">This form has expired. Open the link from the e-mail again.</p>`);
    }
    try {
      return await act(link, fields);
    } catch (error) {
      if (!(error instanceof DomainError) || !(error.code in LINK_PROBLEMS)) throw error;
      return linkProblem(reply, title, error.code);
    }
  }

  const RESET = 'Choose a new password';
  const resetForm = (request: FastifyRequest, reply: FastifyReply, link: Link, errors: string[] = []) =>
    sendPage(
      reply,
      errors.length ? 400 : 200,
      RESET,
      html`${problems(errors)}${form(
        request,
        reply,
        'reset-password',
        link,
        html`<label for="newPassword">New password</label><input id="newPassword" name="newPassword" type="password" autocomplete="new-password" required maxlength="256">
<label for="confirmPassword">Repeat the new password</label><input id="confirmPassword" name="confirmPassword" type="password" autocomplete="new-password" required maxlength="256">
<button type="submit">Set password</button>`,
      )}`,
    );

  route(app, {
    ...PAGE,
    method: 'GET',
    url: '/reset-password',
    summary: 'The page a password-reset e-mail opens (?tenant=&token=): a form for the new password; the link is not spent',
    handler: async (request, reply) => {
      const link = await linkOf(request, request.query as Fields);
      return link ? resetForm(request, reply, link) : linkProblem(reply, RESET, 'LINK_INVALID');
    },
  });

  route(app, {
    ...PAGE,
    method: 'POST',
    url: '/reset-password',
    summary: "The reset page's form (tenant, token, csrf, newPassword, confirmPassword): sets the password, or shows the form again with the problems",
    handler: (request, reply) => onPost(request, reply, 'reset-password', RESET, async (link, fields) => {
      const newPassword = passwordSchema.safeParse(fields.newPassword ?? '');
      if (!newPassword.success) return resetForm(request, reply, link, ['Enter a new password of at most 256 characters.']);
      if (fields.confirmPassword !== newPassword.data) return resetForm(request, reply, link, ['The two passwords do not match.']);
      try {
        await deps.passwords.completeReset(link.tenant.name, link.token, newPassword.data, commandContextOf(request));
      } catch (error) {
        // The tenant's password policy and history: the form again, with their messages.
        if (!(error instanceof DomainError && error.code === 'VALIDATION_ERROR')) throw error;
        return resetForm(request, reply, link, error.details?.map((d) => d.message) ?? [error.message]);
      }
      return sendPage(reply, 200, 'Password changed', html`<p>Your password has been changed and every session of the account has ended. Sign in with the new password.</p>`);
    }),
  });

  const SIGN_IN = 'Sign in';
  route(app, {
    ...PAGE,
    method: 'GET',
    url: '/magic-link',
    summary: 'The page a sign-in e-mail opens (?tenant=&token=): a Sign in button; the link is not spent on GET (mail scanners prefetch)',
    handler: async (request, reply) => {
      const link = await linkOf(request, request.query as Fields);
      if (!link) return linkProblem(reply, SIGN_IN, 'LINK_INVALID');
      return sendPage(reply, 200, SIGN_IN, html`<p>Sign in to ${link.tenant.name} with the link from your e-mail.</p>${form(request, reply, 'magic-link', link, html`<button type="submit">Sign in</button>`)}`);
    },
  });

  /** The second step on an account with a second factor: the code, bound to the same link and CSRF purpose. */
  const codeStep = (request: FastifyRequest, reply: FastifyReply, link: Link, mfaToken: string, errors: string[] = []) =>
    sendPage(reply, errors.length ? 400 : 200, SIGN_IN, html`${problems(errors)}${form(request, reply, 'magic-link', link, html`${codeFields(mfaToken)}<button type="submit">Verify</button>`)}`);
  const signedIn = (reply: FastifyReply) => sendPage(reply, 200, 'You are signed in', html`<p>You are signed in. You can close this page and return to the application.</p>`);

  route(app, {
    ...PAGE,
    method: 'POST',
    url: '/magic-link',
    summary:
      "The sign-in page's form (tenant, token, csrf): spends the link and starts the session; no token is shown. On an account with a second " +
      'factor it then asks for the code (mfa_token and code, 400 with the form again for a wrong one)',
    handler: (request, reply) => onPost(request, reply, 'magic-link', SIGN_IN, async (link, fields) => {
      // The session starts as through the API; its tokens are not shown (docs/decisions.md).
      const context = commandContextOf(request);
      const { mfa_token: mfaToken, code = '' } = fields;
      if (!mfaToken) {
        const { challenge } = await deps.magicLinks.consume(link.tenant.name, link.token, context);
        return challenge ? codeStep(request, reply, link, challenge.mfaToken) : signedIn(reply);
      }
      try {
        await deps.completeSecondFactor(link.tenant.name, mfaToken, codeMethod(code), code, context);
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'INVALID_OTP')) throw error;
        return codeStep(request, reply, link, mfaToken, ['The code is not valid. Try again.']);
      }
      return signedIn(reply);
    }),
  });
}

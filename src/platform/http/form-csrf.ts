import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

const COOKIE = 'iam_form';

function cookieOf(request: FastifyRequest): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === COOKIE && value && /^[A-Za-z0-9_-]{43}$/.test(value)) return value;
  }
  return null;
}

/**
 * Signed double-submit CSRF protection for server-rendered forms: the page sets a random cookie
 * (SameSite=Strict, HttpOnly) and puts in the form an HMAC of that cookie and of what the form acts
 * on (`binding`: e.g. purpose, tenant and link token). Another site can neither read the cookie nor
 * compute the HMAC, and a form value is good only for its own binding and browser. The cookie is
 * Secure when the pages are served over https.
 */
export function formCsrf(masterKey: string, options: { secureCookie: boolean }) {
  // A key of its own, derived from the master key, so every instance accepts the others' forms.
  const key = createHmac('sha256', masterKey).update('iam form csrf v1').digest();
  const mac = (nonce: string, binding: string[]) => createHmac('sha256', key).update([nonce, ...binding].join('\n')).digest('base64url');
  return {
    /** Sets the cookie (keeping a current one) and answers the hidden field's value. */
    issue(request: FastifyRequest, reply: FastifyReply, binding: string[]): string {
      const nonce = cookieOf(request) ?? randomBytes(32).toString('base64url');
      const attributes = ['Path=/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=3600', ...(options.secureCookie ? ['Secure'] : [])];
      void reply.header('set-cookie', `${COOKIE}=${nonce}; ${attributes.join('; ')}`);
      return mac(nonce, binding);
    },

    /** Whether the posted value belongs to this browser's cookie and to `binding`. */
    verify(request: FastifyRequest, binding: string[], posted: string | undefined): boolean {
      const nonce = cookieOf(request);
      if (!nonce || !posted) return false;
      const expected = Buffer.from(mac(nonce, binding));
      const given = Buffer.from(posted);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

export type FormCsrf = ReturnType<typeof formCsrf>;

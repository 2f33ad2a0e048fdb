import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** Markup that is already safe: produced by `html`, never by concatenating input. */
export class SafeHtml {
  constructor(readonly value: string) {}
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const render = (value: unknown): string => {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
};

/** Template tag: every interpolated value is HTML-escaped unless it is SafeHtml (a nested `html`). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  return new SafeHtml(strings.reduce((out, part, i) => out + render(values[i - 1]) + part));
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}label{display:block;margin:1rem 0 .25rem}input{width:100%;padding:.5rem;box-sizing:border-box}
button{margin-top:1.25rem;padding:.6rem 1.2rem}.error{color:#b00020}.error li{margin:.25rem 0}`;

/**
 * Nothing but this page's own stylesheet (by hash) may load or run; forms post only to this
 * origin; no framing; the address (which holds the link token) is never sent as a referrer.
 */
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');
const csp = (formActions: readonly string[]) =>
  `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action ${["'self'", ...formActions].join(' ')}; frame-ancestors 'none'; base-uri 'none'`;
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': csp([]),
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** Sends a complete, self-contained HTML page (no external assets, no script). */
export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: SafeHtml,
  /** Where the form's answer may redirect besides this origin (browsers apply form-action to redirects). */
  options: { formActions?: readonly string[] } = {},
): FastifyReply {
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>${new SafeHtml(STYLE)}</style></head>
<body><main><h1>${title}</h1>
${body}
</main></body></html>
`;
  const headers = options.formActions?.length ? { ...PAGE_HEADERS, 'content-security-policy': csp(options.formActions) } : PAGE_HEADERS;
  return reply.status(status).headers(headers).send(page.value);
}

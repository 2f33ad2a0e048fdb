import { oauthError } from './errors.ts';

/** The OIDC scopes the authorization endpoint understands besides permission names (decisions.md). */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;

export const scopeList = (scope: string | undefined): string[] => [...new Set((scope ?? '').split(' ').filter(Boolean))];

/** The requested scopes when each is allowed, else invalid_scope (RFC 6749 5.2); `fallback` when none is requested. */
export function grantedScopes(requested: string | undefined, allowed: readonly string[], fallback: readonly string[]): string[] {
  const asked = scopeList(requested);
  if (asked.length === 0) return [...fallback];
  const refused = asked.filter((scope) => !allowed.includes(scope));
  if (refused.length) throw oauthError('invalid_scope', `Scope not allowed: ${refused.join(' ')}`);
  return asked;
}

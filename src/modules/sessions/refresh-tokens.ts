import { newOpaqueToken, parseOpaqueToken } from '../../platform/crypto/opaque-tokens.ts';
import { TENANT_NAME } from '../../platform/http/tenant-resolution.ts';

/**
 * Refresh tokens are `<tenant>.<sessionId>.<secret>`: the tenant lets a standard OAuth client,
 * which sends no x-tenant, refresh. The prefix is a claim, not a proof: the session is looked up in
 * that tenant's stream (`session-<tenant>.<id>`) and the secret's hash must match the one recorded
 * there, so a rewritten prefix finds no session. Tokens issued before the prefix
 * (`<sessionId>.<secret>`) name no tenant and still work when x-tenant is sent.
 */
export function newRefreshToken(tenant: string, sessionId: string): { token: string; hash: string } {
  const { token, hash } = newOpaqueToken(sessionId);
  return { token: `${tenant}.${token}`, hash };
}

export function parseRefreshToken(token: string): { tenant: string | null; id: string; secret: string } | null {
  const unprefixed = parseOpaqueToken(token);
  if (unprefixed) return { tenant: null, ...unprefixed };
  const dot = token.indexOf('.');
  const tenant = token.slice(0, dot);
  const rest = dot > 0 && TENANT_NAME.test(tenant) ? parseOpaqueToken(token.slice(dot + 1)) : null;
  return rest ? { tenant, ...rest } : null;
}

/** The tenant a refresh token names (unverified), or null for a token of the older form. */
export const tenantNamedByRefreshToken = (token: string): string | null => parseRefreshToken(token)?.tenant ?? null;

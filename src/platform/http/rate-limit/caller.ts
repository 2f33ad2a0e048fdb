import type { FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import { bearerToken } from '../authentication.ts';

/** Checks an access token's signature, issuer and expiry for a tenant (the token service's verify). */
export interface AccessTokenVerifier {
  verify(token: string, tenant: string): { sub: string; tid: string } | Promise<{ sub: string; tid: string }>;
}

/** Who is calling, for per-user limits: `tenant:subject`, or null without a valid bearer token. */
export type IdentifyCaller = (request: FastifyRequest) => Promise<string | null>;

/**
 * Identifies the caller by a verified access token: only a valid signature names a user, so nobody
 * can spend another user's budget (or escape their own) with a forged token. The token's own tenant
 * is used, as limits run before x-tenant is resolved; the route still checks it against x-tenant.
 */
export function callerFromAccessToken(tokens: AccessTokenVerifier): IdentifyCaller {
  return async (request) => {
    if (!request.headers.authorization) return null;
    try {
      const token = bearerToken(request);
      const claims = await tokens.verify(token, String(decodeJwt(token).tid));
      return `${claims.tid}:${claims.sub}`;
    } catch {
      return null; // the route answers the 401; until then the address is the key
    }
  };
}

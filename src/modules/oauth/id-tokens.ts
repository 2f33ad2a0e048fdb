import { createHash } from 'node:crypto';
import { jwtVerify } from 'jose';
import { ID_TOKEN_ALG, type KeyRing } from '../keys/index.ts';
import type { TokenSubject } from '../users/index.ts';
import type { Clock } from '../../platform/clock.ts';
import { signCompactJws } from '../../platform/crypto/jws-signing.ts';

/** OIDC Core 3.1.3.6: base64url of the left half of the SHA-256 of the access token (RS256/HS256). */
export const atHash = (accessToken: string): string => createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url');

export interface IdTokenGrant {
  clientId: string;
  scope: string[];
  nonce: string | null;
  authTime: string;
  acr: string;
  amr: string[];
  sessionId: string;
}

/** The claims the scopes release (OIDC Core 5.4). */
function scopedClaims(user: TokenSubject, scope: string[]): Record<string, unknown> {
  return {
    ...(scope.includes('profile')
      ? {
          name: [user.firstName, user.lastName].filter(Boolean).join(' ') || undefined,
          given_name: user.firstName ?? undefined,
          family_name: user.lastName ?? undefined,
          preferred_username: user.username ?? user.email,
        }
      : {}),
    ...(scope.includes('email') ? { email: user.email, email_verified: user.emailVerified } : {}),
  };
}

/**
 * ID tokens (OIDC Core 2) for the client as audience, always signed with the key ring's current
 * RS256 key, published in the JWKS: also when access tokens are HS256 (decisions in docs/oauth.md).
 */
export class IdTokens {
  constructor(
    private readonly keyRing: KeyRing,
    private readonly issuer: string,
    private readonly clock: Clock,
  ) {}

  async issue(user: TokenSubject, grant: IdTokenGrant, accessToken: string, lifetimeSeconds: number): Promise<string> {
    const { kid, alg, key } = await this.keyRing.signingKey(ID_TOKEN_ALG);
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const claims = {
      ...scopedClaims(user, grant.scope),
      azp: grant.clientId,
      auth_time: Math.floor(Date.parse(grant.authTime) / 1000),
      ...(grant.nonce !== null ? { nonce: grant.nonce } : {}),
      acr: grant.acr,
      amr: grant.amr,
      sid: grant.sessionId,
      at_hash: atHash(accessToken),
      iss: this.issuer,
      sub: user.userId,
      aud: grant.clientId,
      iat: now,
      exp: now + lifetimeSeconds,
    };
    return signCompactJws({ alg, kid, typ: 'JWT' }, claims, key);
  }

  /**
   * An id_token_hint (RP-initiated logout): our signature and issuer; expiry is not checked (the
   * OIDC RP-initiated logout spec lets an expired ID token name the session to end).
   */
  async verifyHint(idToken: string): Promise<{ sub: string; aud: string; sid: string | null } | null> {
    try {
      const { payload } = await jwtVerify(
        idToken,
        async (header) => (header.kid ? await this.keyRing.verificationKey(header.kid, ID_TOKEN_ALG) : null) ?? Promise.reject(new Error('unknown kid')),
        { issuer: this.issuer, algorithms: [ID_TOKEN_ALG], currentDate: new Date(0) },
      );
      if (typeof payload.sub !== 'string' || typeof payload.aud !== 'string') return null;
      return { sub: payload.sub, aud: payload.aud, sid: typeof payload.sid === 'string' ? payload.sid : null };
    } catch {
      return null;
    }
  }
}

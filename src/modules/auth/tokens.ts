import type { KeyRing } from '../keys/index.ts';
import type { JWTPayload } from 'jose';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import { signCompactJws } from '../../platform/crypto/jws-signing.ts';
import { platformError } from '../../platform/errors.ts';
import { JwsRejected, verifiedJwsPayload } from './compact-jws.ts';
import { VerifiedTokens } from './verified-tokens.ts';

export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  tid: string;
  sid?: string;
  roles: string[];
  acr: string;
  amr: string[];
  /** Space-separated; limits the permissions the token can use. */
  scope?: string;
  /** RFC 9068: the client the token was issued to (equal to sub for a client's own token). */
  client_id?: string;
}

const invalid = () => platformError('TOKEN_INVALID', 'The access token is invalid');
const expired = () => platformError('TOKEN_EXPIRED', 'The access token has expired');

/** Tokens whose verification is remembered: the busiest clients' tokens, a few MB at most. */
const REMEMBERED_TOKENS = 20_000;

const isNumericDate = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** The audience is the tenant (RFC 7519 allows one value or several). */
const audienceIncludes = (aud: unknown, tenant: string) => (Array.isArray(aud) ? aud.includes(tenant) : aud === tenant);

/** The claims of a verified token, if it belongs to `tenant` (tid and aud). */
function forTenant(claims: AccessTokenClaims, tenant: string): AccessTokenClaims {
  if (claims.tid !== tenant || !audienceIncludes(claims.aud, tenant)) throw invalid();
  return claims;
}

/** Issues and verifies access tokens (JWT) with the key ring's algorithm only. */
export class TokenService {
  private readonly verified = new VerifiedTokens<AccessTokenClaims>(REMEMBERED_TOKENS);

  constructor(
    private readonly keyRing: KeyRing,
    private readonly issuer: string,
    private readonly clock: Clock,
  ) {}

  async issue(claims: Pick<AccessTokenClaims, 'sub' | 'tid' | 'sid' | 'roles' | 'acr' | 'amr' | 'scope'> & Record<string, unknown>, lifetimeSeconds: number) {
    const { kid, alg, key } = await this.keyRing.signingKey();
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const registered = {
      iss: this.issuer,
      // Our API is always an audience (tokens are verified by tenant); an exchanged token may name one more (RFC 8693).
      aud: typeof claims.aud === 'string' ? [claims.tid, claims.aud] : claims.tid,
      iat: now,
      exp: now + lifetimeSeconds,
      // Unique, not ordered: a v4 UUID from node's buffered randomness costs a tenth of a v7 id.
      jti: randomUUID(),
    };
    // Object.assign, not `{ ...claims, ...registered }`: V8 (node 20) builds a spread followed by
    // members the spread object lacks through its slow path, about 10 µs a token against 0.3.
    const token = await signCompactJws({ alg, kid, typ: 'at+jwt' }, Object.assign({}, claims, registered), key);
    return { token, expiresIn: lifetimeSeconds };
  }

  /**
   * Verifies signature (only the configured algorithm: no `none`, no HS256 made with an RSA public
   * key), issuer, expiry, and that the token belongs to `tenant` (tid and aud). The signature check
   * is node:crypto's synchronous verify with a key object made once per kid; a token verified
   * before answers from memory until it expires. A token it refuses throws (synchronously when
   * answered from memory): callers await it.
   */
  verify(token: string, tenant: string): AccessTokenClaims | Promise<AccessTokenClaims> {
    const nowMs = this.clock.now().getTime();
    const key = VerifiedTokens.keyOf(token);
    const claims = this.verified.get(key, nowMs);
    // A token verified before answers without a promise (every authenticated request comes here).
    if (claims) return forTenant(claims, tenant);
    return this.verifySignedClaims(token, Math.floor(nowMs / 1000)).then((verified) => {
      this.verified.remember(key, verified, verified.exp! * 1000);
      return forTenant(verified, tenant);
    });
  }

  private async verifySignedClaims(token: string, now: number): Promise<AccessTokenClaims> {
    let payload: Record<string, unknown>;
    try {
      payload = await verifiedJwsPayload(token, this.keyRing.alg, (kid) => this.keyRing.verificationKey(kid));
    } catch (error) {
      if (error instanceof JwsRejected) throw invalid();
      throw error;
    }
    const { iss, exp, nbf, iat, sub, tid, roles } = payload;
    if (iss !== this.issuer || !isNumericDate(exp) || typeof sub !== 'string' || typeof tid !== 'string' || !Array.isArray(roles)) throw invalid();
    if ((nbf !== undefined && (!isNumericDate(nbf) || nbf > now)) || (iat !== undefined && !isNumericDate(iat))) throw invalid();
    if (exp <= now) throw expired();
    return payload as AccessTokenClaims;
  }
}

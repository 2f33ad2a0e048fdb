import type { KeyRing } from '../keys/index.ts';
import { errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { Clock } from '../../platform/clock.ts';
import { platformError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';

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

/** Issues and verifies access tokens (JWT) with the key ring's algorithm only. */
export class TokenService {
  constructor(
    private readonly keyRing: KeyRing,
    private readonly issuer: string,
    private readonly clock: Clock,
  ) {}

  async issue(claims: Pick<AccessTokenClaims, 'sub' | 'tid' | 'sid' | 'roles' | 'acr' | 'amr' | 'scope'> & Record<string, unknown>, lifetimeSeconds: number) {
    const { kid, key } = await this.keyRing.signingKey();
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const token = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: this.keyRing.alg, kid, typ: 'at+jwt' })
      .setIssuer(this.issuer)
      // Our API is always an audience (tokens are verified by tenant); an exchanged token may name one more (RFC 8693).
      .setAudience(typeof claims.aud === 'string' ? [String(claims.tid), claims.aud] : String(claims.tid))
      .setIssuedAt(now)
      .setExpirationTime(now + lifetimeSeconds)
      .setJti(newId())
      .sign(key);
    return { token, expiresIn: lifetimeSeconds };
  }

  /**
   * Verifies signature (only the configured algorithm: no `none`, no HS256 made with an RSA public
   * key), issuer, expiry, and that the token belongs to `tenant`.
   */
  async verify(token: string, tenant: string): Promise<AccessTokenClaims> {
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = header.kid ? await this.keyRing.verificationKey(header.kid) : null;
          if (!key) throw invalid();
          return key;
        },
        { issuer: this.issuer, algorithms: [this.keyRing.alg], currentDate: this.clock.now() },
      );
      const claims = payload as AccessTokenClaims;
      if (claims.tid !== tenant || typeof claims.sub !== 'string' || !Array.isArray(claims.roles)) throw invalid();
      return claims;
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw platformError('TOKEN_EXPIRED', 'The access token has expired');
      throw invalid();
    }
  }
}

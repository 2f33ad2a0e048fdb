import { createHmac, timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import type { JwsAlgorithm } from '../../platform/crypto/jws-signing.ts';

/** Why a compact JWS was refused; the caller maps every reason to one answer (TOKEN_INVALID). */
export class JwsRejected extends Error {}

const base64urlJson = (part: string): unknown => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether `signature` is `alg`'s over `input` with `key`, a key of the kind `alg` needs (no other kind is tried). */
function signatureMatches(alg: JwsAlgorithm, key: KeyObject, input: string, signature: Buffer): boolean {
  switch (alg) {
    case 'RS256':
      return key.type === 'public' && key.asymmetricKeyType === 'rsa' && verify('sha256', Buffer.from(input), key, signature);
    case 'ES256':
      // JWS's r || s form only (64 bytes): a DER signature, which node would accept by default, is refused.
      return key.type === 'public' && key.asymmetricKeyType === 'ec' && signature.length === 64 && verify('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }, signature);
    case 'HS256': {
      if (key.type !== 'secret') return false;
      const expected = createHmac('sha256', key).update(input).digest();
      return expected.length === signature.length && timingSafeEqual(expected, signature);
    }
  }
}

/**
 * The payload of a compact JWS (RFC 7515) signed with `alg` by the key its `kid` names, checked
 * with node:crypto's synchronous verify. The header must name exactly `alg` (no `none`, no HS256
 * made with an RSA public key: the key's type must fit the algorithm) and no critical extension.
 */
export async function verifiedJwsPayload(
  token: string,
  alg: JwsAlgorithm,
  keyOf: (kid: string) => Promise<KeyObject | null>,
): Promise<Record<string, unknown>> {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[0] || !parts[1] || !parts[2]) throw new JwsRejected('not a compact JWS');
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  let header: unknown;
  let payload: unknown;
  try {
    header = base64urlJson(headerPart);
    payload = base64urlJson(payloadPart);
  } catch {
    throw new JwsRejected('malformed header or payload');
  }
  if (!isObject(header) || header.alg !== alg || typeof header.kid !== 'string' || 'crit' in header) throw new JwsRejected('header');
  if (!isObject(payload)) throw new JwsRejected('payload');
  const key = await keyOf(header.kid);
  if (!key || !signatureMatches(alg, key, `${headerPart}.${payloadPart}`, Buffer.from(signaturePart, 'base64url'))) {
    throw new JwsRejected('signature');
  }
  return payload;
}

import { createHmac, sign, type KeyObject } from 'node:crypto';

/** The JWS algorithms the service signs and verifies with (RFC 7518 section 3.1). */
export type JwsAlgorithm = 'RS256' | 'ES256' | 'HS256';

type JwsHeader = { alg: JwsAlgorithm; kid: string; typ?: string };

const base64urlJson = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Encoded headers by alg, kid and typ: a key signs thousands of tokens with one of a few headers. */
const encodedHeaders = new Map<string, string>();
/** Far more than the kids in use (rotation publishes a few at a time); past it the map starts again. */
const MAX_ENCODED_HEADERS = 64;

/** The header's base64url JSON (members in the order alg, kid, typ), made once per header. */
function encodedHeader({ alg, kid, typ }: JwsHeader): string {
  // The kid's length first: no kid and typ can spell another pair's key.
  const id = `${alg}:${kid.length}:${kid}:${typ ?? ''}`;
  let encoded = encodedHeaders.get(id);
  if (encoded === undefined) {
    if (encodedHeaders.size >= MAX_ENCODED_HEADERS) encodedHeaders.clear();
    encoded = base64urlJson(typ === undefined ? { alg, kid } : { alg, kid, typ });
    encodedHeaders.set(id, encoded);
  }
  return encoded;
}

/** RSASSA-PKCS1-v1_5 with SHA-256 on libuv's thread pool: the event loop serves requests while another core signs. */
const rsaSha256 = (input: string, key: KeyObject): Promise<Buffer> =>
  new Promise((resolve, reject) => sign('sha256', Buffer.from(input), key, (error, signature) => (error ? reject(error) : resolve(signature))));

/** ECDSA P-256 with SHA-256, as JWS encodes it: r and s, 32 bytes each (RFC 7518 section 3.4), not DER. */
const ecdsaP256Sha256 = (input: string, key: KeyObject): Buffer => sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });

/**
 * A compact JWS (RFC 7515) of JSON claims, signed with a node:crypto key object made once per key
 * (RS256 and ES256: a private key, HS256: a secret key). Members whose value is undefined are left
 * out, as JSON.stringify does. An HMAC or an ECDSA signature costs tens of microseconds and is
 * computed inline; an RSA one, about a millisecond, on the pool.
 */
export async function signCompactJws(header: JwsHeader, claims: Record<string, unknown>, key: KeyObject): Promise<string> {
  const input = `${encodedHeader(header)}.${base64urlJson(claims)}`;
  const signature =
    header.alg === 'HS256' ? createHmac('sha256', key).update(input).digest() : header.alg === 'ES256' ? ecdsaP256Sha256(input, key) : await rsaSha256(input, key);
  return `${input}.${signature.toString('base64url')}`;
}

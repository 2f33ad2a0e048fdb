import { createHmac, sign, type KeyObject } from 'node:crypto';

const base64urlJson = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** RSASSA-PKCS1-v1_5 with SHA-256 on libuv's thread pool: the event loop serves requests while another core signs. */
const rsaSha256 = (input: string, key: KeyObject): Promise<Buffer> =>
  new Promise((resolve, reject) => sign('sha256', Buffer.from(input), key, (error, signature) => (error ? reject(error) : resolve(signature))));

/**
 * A compact JWS (RFC 7515) of JSON claims, signed with a node:crypto key object made once per key
 * (RS256: a private key, HS256: a secret key). Members whose value is undefined are left out, as
 * JSON.stringify does. An HMAC costs microseconds and is computed inline.
 */
export async function signCompactJws(header: { alg: 'RS256' | 'HS256'; kid: string; typ?: string }, claims: Record<string, unknown>, key: KeyObject): Promise<string> {
  const input = `${base64urlJson(header)}.${base64urlJson(claims)}`;
  const signature = header.alg === 'HS256' ? createHmac('sha256', key).update(input).digest() : await rsaSha256(input, key);
  return `${input}.${signature.toString('base64url')}`;
}

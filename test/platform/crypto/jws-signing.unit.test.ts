import { createHmac, createSecretKey, generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signCompactJws } from '../../../src/platform/crypto/jws-signing.ts';

const decoded = (part: string): unknown => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
const encoded = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const claims = { sub: 'acme.c1', tid: 'acme', roles: [], iat: 1, exp: 2 };

describe('compact JWS signing', () => {
  it('writes the header members alg, kid, typ in that order, the same bytes at every call, and each header its own', async () => {
    const key = createSecretKey(Buffer.alloc(32, 7));
    const first = await signCompactJws({ alg: 'HS256', kid: 'k1', typ: 'at+jwt' }, claims, key);
    const again = await signCompactJws({ alg: 'HS256', kid: 'k1', typ: 'at+jwt' }, claims, key);
    expect(first.split('.')[0]).toBe(encoded({ alg: 'HS256', kid: 'k1', typ: 'at+jwt' }));
    expect(again).toBe(first);
    const headers = await Promise.all(
      [
        { alg: 'HS256' as const, kid: 'k2', typ: 'at+jwt' },
        { alg: 'HS256' as const, kid: 'k1', typ: 'JWT' },
        { alg: 'HS256' as const, kid: 'k1' },
        // A kid and typ that, joined naively, would spell another pair's key.
        { alg: 'HS256' as const, kid: 'k1:at', typ: 'jwt' },
        { alg: 'HS256' as const, kid: 'k1', typ: 'at:jwt' },
      ].map(async (header) => decoded((await signCompactJws(header, claims, key)).split('.')[0]!)),
    );
    expect(headers).toEqual([
      { alg: 'HS256', kid: 'k2', typ: 'at+jwt' },
      { alg: 'HS256', kid: 'k1', typ: 'JWT' },
      { alg: 'HS256', kid: 'k1' },
      { alg: 'HS256', kid: 'k1:at', typ: 'jwt' },
      { alg: 'HS256', kid: 'k1', typ: 'at:jwt' },
    ]);
  });

  it('signs header and claims as encoded, with HS256, RS256 or ES256 (r || s, 64 bytes)', async () => {
    const secret = Buffer.alloc(32, 9);
    const hs = await signCompactJws({ alg: 'HS256', kid: 'h', typ: 'JWT' }, claims, createSecretKey(secret));
    const [hsHeader, hsPayload, hsSignature] = hs.split('.') as [string, string, string];
    expect(decoded(hsPayload)).toEqual(claims);
    expect(hsSignature).toBe(createHmac('sha256', secret).update(`${hsHeader}.${hsPayload}`).digest('base64url'));

    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rs = await signCompactJws({ alg: 'RS256', kid: 'r', typ: 'at+jwt' }, claims, privateKey);
    const [rsHeader, rsPayload, rsSignature] = rs.split('.') as [string, string, string];
    expect(decoded(rsHeader)).toEqual({ alg: 'RS256', kid: 'r', typ: 'at+jwt' });
    expect(verify('sha256', Buffer.from(`${rsHeader}.${rsPayload}`), publicKey, Buffer.from(rsSignature, 'base64url'))).toBe(true);

    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const es = await signCompactJws({ alg: 'ES256', kid: 'e', typ: 'at+jwt' }, claims, ec.privateKey);
    const [esHeader, esPayload, esSignature] = es.split('.') as [string, string, string];
    expect(decoded(esHeader)).toEqual({ alg: 'ES256', kid: 'e', typ: 'at+jwt' });
    const signature = Buffer.from(esSignature, 'base64url');
    expect(signature).toHaveLength(64);
    expect(verify('sha256', Buffer.from(`${esHeader}.${esPayload}`), { key: ec.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });
});

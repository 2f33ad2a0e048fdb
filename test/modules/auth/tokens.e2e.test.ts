import { createHmac, createPublicKey, sign } from 'node:crypto';
import { SignJWT, createLocalJWKSet, exportSPKI, generateKeyPair, importJWK, jwtVerify, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/platform/clock.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const headerOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { alg: string; kid: string; typ?: string };

describe('access token verification', () => {
  let t: TestService;
  const clock = new ManualClock(new Date());
  let good: string;
  const claims = () => ({ iss: 'http://iam.test', sub: 'u1', aud: PLATFORM, tid: PLATFORM, roles: ['admin'], acr: 'aal1', amr: ['pwd'] });
  const get = (token: string) => t.request({ method: 'GET', url: '/api/roles', tenant: PLATFORM, token });

  beforeAll(async () => {
    t = await startTestService({ clock });
    good = await t.token({ sub: 'u1', tenant: PLATFORM, roles: ['admin'] });
  });
  afterAll(() => t.close());

  it('accepts a token signed by the key ring', async () => {
    expect((await get(good)).status).toBe(200);
  });

  it('rejects alg none', async () => {
    const now = Math.floor(clock.now().getTime() / 1000);
    const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims(), iat: now, exp: now + 600 })}.`;
    expect((await get(unsigned)).body.error.code).toBe('TOKEN_INVALID');
  });

  it('rejects an HS256 token whose secret is the RSA public key (algorithm confusion)', async () => {
    const jwk = t.service.keyRing.jwks().keys[0]!;
    const pem = await exportSPKI((await importJWK(jwk, 'RS256', { extractable: true })) as CryptoKey);
    const now = Math.floor(clock.now().getTime() / 1000);
    const input = `${b64({ alg: 'HS256', kid: jwk.kid })}.${b64({ ...claims(), iat: now, exp: now + 600 })}`;
    const forged = `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
    const response = await get(forged);
    expect([response.status, response.body.error.code]).toEqual([401, 'TOKEN_INVALID']);
  });

  it('rejects a token signed by an unknown key, and a tampered payload', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const foreign = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'unknown-kid' }).setIssuedAt().setExpirationTime('10m').sign(privateKey);
    expect((await get(foreign)).body.error.code).toBe('TOKEN_INVALID');
    const [h, , s] = good.split('.');
    const tampered = `${h}.${b64({ ...claims(), roles: ['admin'], sub: 'someone-else', exp: 9_999_999_999 })}.${s}`;
    expect((await get(tampered)).body.error.code).toBe('TOKEN_INVALID');
    expect((await get('not-a-jwt')).body.error.code).toBe('TOKEN_INVALID');
  });

  it('rejects a token of another tenant with 401 TOKEN_INVALID', async () => {
    const other = await t.token({ sub: 'u1', tenant: 'other', roles: ['admin'] });
    expect((await get(other)).body.error.code).toBe('TOKEN_INVALID');
  });

  it('rejects a token signed by the key ring for another issuer or another audience', async () => {
    const { kid, key } = await t.service.keyRing.signingKey();
    const now = Math.floor(clock.now().getTime() / 1000);
    const sign = (payload: Record<string, unknown>) =>
      new SignJWT({ ...claims(), iat: now, exp: now + 600, ...payload }).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' }).sign(key);
    expect((await get(await sign({}))).status).toBe(200);
    for (const payload of [{ iss: 'http://elsewhere.test' }, { aud: 'other' }, { aud: undefined }, { nbf: now + 600 }]) {
      const response = await get(await sign(payload));
      expect([response.status, response.body.error.code]).toEqual([401, 'TOKEN_INVALID']);
    }
  });

  it('a token verified before is refused once it expires (verified tokens are remembered no longer)', async () => {
    const token = await t.token({ sub: 'u1', tenant: PLATFORM, roles: ['admin'] });
    expect((await get(token)).status).toBe(200);
    expect((await get(token)).status).toBe(200);
    clock.advance(901_000);
    const response = await get(token);
    expect([response.status, response.body.error.code]).toEqual([401, 'TOKEN_EXPIRED']);
  });

  it('rejects an expired token with TOKEN_EXPIRED', async () => {
    const token = await t.token({ sub: 'u1', tenant: PLATFORM, roles: ['admin'] });
    clock.advance(901_000);
    const response = await get(token);
    expect([response.status, response.body.error.code]).toEqual([401, 'TOKEN_EXPIRED']);
  });

  it('rotation adds a key: old tokens stay valid, new ones use the new kid, both keys are published', async () => {
    const before = await t.token({ sub: 'u1', tenant: PLATFORM, roles: ['admin'] });
    const rotated = await t.request({ method: 'POST', url: '/api/admin/signing-keys/rotate', tenant: PLATFORM, token: before });
    expect(rotated.status).toBe(200);
    const after = await t.token({ sub: 'u1', tenant: PLATFORM, roles: ['admin'] });
    const kid = (token: string) => headerOf(token).kid;
    expect(kid(after)).toBe(rotated.body.data.kid);
    expect(kid(after)).not.toBe(kid(before));
    expect((await get(before)).status).toBe(200);
    expect((await get(after)).status).toBe(200);
    const jwks = (await t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys.map((k: { kid: string }) => k.kid);
    expect(jwks).toEqual([kid(before), kid(after)]);
    clock.advance(86_401_000);
    const later = (await t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys.map((k: { kid: string }) => k.kid);
    expect(later).toEqual([kid(after)]);
  });

  it('never stores a private key in clear text', async () => {
    const { rows } = await t.db.pool.query("select data from events where type = 'SigningKeyAdded'");
    for (const { data } of rows) {
      expect(data.sealedPrivateKey).toMatch(/^v1\./);
      expect(JSON.stringify(data)).not.toMatch(/"d":|"p":|"q":/);
    }
  });
});

describe('HS256 signing (IAM_JWT_ALG=HS256)', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { IAM_JWT_ALG: 'HS256' } });
  });
  afterAll(() => t.close());

  it('signs with HS256, verifies its own tokens, and publishes only the ID tokens\' RS256 key in the JWKS', async () => {
    const token = await t.token({ sub: 'u1', tenant: PLATFORM, roles: ['admin'] });
    const header = headerOf(token);
    expect(header.alg).toBe('HS256');
    expect((await t.request({ method: 'GET', url: '/api/roles', tenant: PLATFORM, token })).status).toBe(200);
    const { keys } = (await t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body;
    expect(keys).toEqual([{ kty: 'RSA', use: 'sig', kid: expect.any(String), alg: 'RS256', n: expect.any(String), e: 'AQAB' }]);
    expect(keys[0].kid).not.toBe(header.kid);
  });

  it('rejects an RS256 token (also one signed with the ID tokens\' own key) and an HS256 token made with another secret', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const idTokenKey = await t.service.keyRing.signingKey('RS256');
    const now = Math.floor(Date.now() / 1000);
    const payload = { iss: 'http://iam.test', sub: 'u1', aud: PLATFORM, tid: PLATFORM, roles: ['admin'], iat: now, exp: now + 600 };
    const { kid } = headerOf(await t.token({ sub: 'u1', tenant: PLATFORM, roles: [] }));
    const rs = await new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey);
    const hs = await new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid }).sign(new TextEncoder().encode('x'.repeat(32)));
    const signedAsIdToken = await new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: idTokenKey.kid }).sign(idTokenKey.key);
    for (const token of [rs, hs, signedAsIdToken]) {
      const response = await t.request({ method: 'GET', url: '/api/roles', tenant: PLATFORM, token });
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('TOKEN_INVALID');
    }
  });
});

describe('ES256 signing (IAM_JWT_ALG=ES256)', () => {
  let t: TestService;
  const get = (token: string) => t.request({ method: 'GET', url: '/api/roles', tenant: PLATFORM, token });
  const jwks = async () => (await t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys as JWK[];
  const payload = () => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: 'http://iam.test', sub: 'u1', aud: PLATFORM, tid: PLATFORM, roles: ['admin'], acr: 'aal1', amr: ['pwd'], iat: now, exp: now + 600 };
  };

  beforeAll(async () => {
    t = await startTestService({ env: { IAM_JWT_ALG: 'ES256' } });
  });
  afterAll(() => t.close());

  it('signs with ES256 on P-256 (r || s), and a verifier holding only the JWKS accepts the token', async () => {
    const token = await t.token({ sub: 'u1', tenant: PLATFORM, roles: ['admin'] });
    const header = headerOf(token);
    expect(header).toEqual({ alg: 'ES256', kid: expect.any(String), typ: 'at+jwt' });
    expect(Buffer.from(token.split('.')[2]!, 'base64url')).toHaveLength(64);
    expect((await get(token)).status).toBe(200);
    const keys = await jwks();
    // The access tokens' key first, then the ID tokens' RS256 key; no private member.
    expect(keys).toEqual([
      { kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), use: 'sig', kid: header.kid, alg: 'ES256' },
      { kty: 'RSA', n: expect.any(String), e: 'AQAB', use: 'sig', kid: expect.any(String), alg: 'RS256' },
    ]);
    const { payload: verified } = await jwtVerify(token, createLocalJWKSet({ keys }), { issuer: 'http://iam.test', audience: PLATFORM, algorithms: ['ES256'] });
    expect(verified).toMatchObject({ sub: 'u1', tid: PLATFORM, roles: ['admin'] });
  });

  it('accepts r || s made with its key, and refuses the same signature DER-encoded, another P-256 key, the ID tokens\' RS256 key and HS256 over the public key', async () => {
    const { kid, key } = await t.service.keyRing.signingKey();
    const input = `${b64({ alg: 'ES256', kid, typ: 'at+jwt' })}.${b64(payload())}`;
    const raw = `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    expect((await get(raw)).status).toBe(200);

    const der = `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
    const { privateKey: otherKey } = await generateKeyPair('ES256');
    const foreign = await new SignJWT(payload()).setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' }).sign(otherKey);
    const idTokenKey = await t.service.keyRing.signingKey('RS256');
    const asIdToken = await new SignJWT(payload()).setProtectedHeader({ alg: 'RS256', kid: idTokenKey.kid }).sign(idTokenKey.key);
    const pem = createPublicKey(key).export({ format: 'pem', type: 'spki' });
    const hsInput = `${b64({ alg: 'HS256', kid })}.${b64(payload())}`;
    const confused = `${hsInput}.${createHmac('sha256', pem).update(hsInput).digest('base64url')}`;
    for (const token of [der, foreign, asIdToken, confused]) {
      const response = await get(token);
      expect([response.status, response.body.error.code]).toEqual([401, 'TOKEN_INVALID']);
    }
  });

  it('a rotation adds an ES256 and an RS256 key: tokens of the old key stay valid, both generations are published', async () => {
    const before = await t.token({ sub: 'u1', tenant: PLATFORM, roles: ['admin'] });
    const rotated = await t.request({ method: 'POST', url: '/api/admin/signing-keys/rotate', tenant: PLATFORM, token: before });
    expect(rotated.status).toBe(200);
    const after = await t.token({ sub: 'u1', tenant: PLATFORM, roles: ['admin'] });
    expect(headerOf(after)).toMatchObject({ alg: 'ES256', kid: rotated.body.data.kid });
    expect((await get(before)).status).toBe(200);
    expect((await jwks()).map((key) => [key.alg, key.kid === headerOf(before).kid || key.kid === headerOf(after).kid])).toEqual([
      ['ES256', true],
      ['ES256', true],
      ['RS256', false],
      ['RS256', false],
    ]);
  });
});

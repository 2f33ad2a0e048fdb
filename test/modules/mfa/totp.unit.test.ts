import { describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, matchingStep, newTotpSecret, otpauthUrl, timeStep, totpCode } from '../../../src/modules/mfa/totp.ts';
import { newRecoveryCodes, recoveryCodeHash } from '../../../src/modules/mfa/recovery-codes.ts';

// RFC 6238 appendix B, SHA-1 rows: the 8-digit values' last six digits are the 6-digit codes.
const RFC_SECRET = Buffer.from('12345678901234567890', 'ascii');
const RFC_VECTORS: [number, string][] = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
  [20000000000, '353130'],
];

describe('TOTP (RFC 6238, SHA-1, 6 digits, 30 s)', () => {
  it('matches the RFC 6238 test vectors', () => {
    for (const [seconds, code] of RFC_VECTORS) expect(totpCode(RFC_SECRET, timeStep(new Date(seconds * 1000)))).toBe(code);
  });

  it('base32 round-trips and matches RFC 4648', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Decode('MZXW6YTBOI').toString()).toBe('foobar');
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Encode(base32Decode(secret))).toBe(secret);
    expect(() => base32Decode('not base32!')).toThrow();
  });

  it('accepts one step of drift either way, and no step at or before the last accepted', () => {
    const secret = base32Encode(RFC_SECRET);
    const at = new Date(1111111111 * 1000);
    const now = timeStep(at);
    for (const drift of [-1, 0, 1]) expect(matchingStep(secret, totpCode(RFC_SECRET, now + drift), at, 0)).toBe(now + drift);
    for (const drift of [-2, 2]) expect(matchingStep(secret, totpCode(RFC_SECRET, now + drift), at, 0)).toBeNull();
    expect(matchingStep(secret, totpCode(RFC_SECRET, now), at, now)).toBeNull();
    expect(matchingStep(secret, totpCode(RFC_SECRET, now + 1), at, now)).toBe(now + 1);
    expect(matchingStep(secret, '12345', at, 0)).toBeNull();
    expect(matchingStep(secret, 'abcdef', at, 0)).toBeNull();
  });

  it('builds the Key Uri Format authenticator apps scan', () => {
    const text = otpauthUrl('acme', 'ann@example.com', 'JBSWY3DPEHPK3PXP');
    expect(text.startsWith('otpauth://totp/acme:ann%40example.com?')).toBe(true);
    const url = new URL(text);
    expect(Object.fromEntries(url.searchParams)).toEqual({ secret: 'JBSWY3DPEHPK3PXP', issuer: 'acme', algorithm: 'SHA1', digits: '6', period: '30' });
  });
});

describe('recovery codes', () => {
  it('are ten distinct codes of 80 bits, hashed ignoring case, spaces and dashes', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    const [code] = codes as [string];
    expect(recoveryCodeHash(code.toUpperCase().replace(/-/g, ' '))).toBe(recoveryCodeHash(code));
    expect(recoveryCodeHash(code)).not.toBe(recoveryCodeHash(codes[1]!));
  });
});

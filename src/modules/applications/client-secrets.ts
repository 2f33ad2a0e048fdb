import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hashOpaqueSecret } from '../../platform/crypto/opaque-tokens.ts';

/** A client secret: 256 random bits, shown once; only its SHA-256 is recorded. */
export function newClientSecret(): { secret: string; hash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { secret, hash: hashOpaqueSecret(secret) };
}

/** Compares digests of equal length in constant time, never the secrets themselves. */
export function secretMatches(presented: string, recordedHash: string | null): boolean {
  if (recordedHash === null) return false;
  const given = Buffer.from(hashOpaqueSecret(presented));
  const expected = Buffer.from(recordedHash);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

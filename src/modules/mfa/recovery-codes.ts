import { createHash, randomBytes } from 'node:crypto';
import { base32Encode } from './totp.ts';

const RECOVERY_CODE_COUNT = 10;

/**
 * Ten single-use recovery codes of 80 random bits each, shown once as `xxxx-xxxx-xxxx-xxxx`. Their
 * entropy makes a plain SHA-256 enough to store them (no dictionary to try, unlike passwords).
 */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => base32Encode(randomBytes(10)).toLowerCase().match(/.{4}/g)!.join('-'));
}

/** What is stored: the hash of the code as typed, ignoring case, spaces and dashes. */
export const recoveryCodeHash = (code: string): string =>
  createHash('sha256').update(code.toLowerCase().replace(/[\s-]/g, '')).digest('base64url');

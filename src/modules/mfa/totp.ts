import { createHmac, randomBytes } from 'node:crypto';

/** RFC 6238 as decisions.md fixes it: HMAC-SHA-1, 6 digits, 30-second steps, one step of drift. */
const STEP_SECONDS = 30;
const DIGITS = 6;
const DRIFT_STEPS = 1;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export const TOTP_CODE = /^\d{6}$/;

/** A TOTP code as typed: apps show it in groups ("123 456"). */
export const totpDigits = (code: string) => code.replace(/\s/g, '');

/** RFC 4648 base32 without padding: how authenticator apps take a secret. */
export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return bits > 0 ? out + BASE32[(value << (5 - bits)) & 31] : out;
}

export function base32Decode(text: string): Buffer {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text.replace(/=+$/, '').toUpperCase()) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error('Not a base32 text');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** A new shared secret: 160 bits, the HMAC-SHA-1 key length RFC 4226 recommends. */
export const newTotpSecret = (): string => base32Encode(randomBytes(20));

export const timeStep = (at: Date): number => Math.floor(at.getTime() / 1000 / STEP_SECONDS);

/** RFC 4226 HOTP with the RFC 6238 counter: the code of one time step. */
export function totpCode(secret: Buffer, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', secret).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** DIGITS).padStart(DIGITS, '0');
}

/**
 * The time step a code belongs to, within one step of drift of `at`, and later than `lastStep`
 * (a code is accepted once: a step used before never counts again); null when none matches.
 */
export function matchingStep(secretBase32: string, code: string, at: Date, lastStep: number): number | null {
  if (!TOTP_CODE.test(code)) return null;
  const secret = base32Decode(secretBase32);
  const now = timeStep(at);
  for (let step = now - DRIFT_STEPS; step <= now + DRIFT_STEPS; step += 1) {
    if (step > lastStep && totpCode(secret, step) === code) return step;
  }
  return null;
}

/** The Key Uri Format authenticator apps scan (google-authenticator wiki): label "issuer:account". */
export function otpauthUrl(issuer: string, account: string, secretBase32: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({ secret: secretBase32, issuer, algorithm: 'SHA1', digits: String(DIGITS), period: String(STEP_SECONDS) });
  return `otpauth://totp/${label}?${query}`;
}

import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** How reads show a secret: the prefix and its last four characters. */
export const maskedSecret = (lastFour: string): string => `${SECRET_PREFIX}...${lastFour}`;

export const lastFour = (secret: string): string => secret.slice(-4);

/**
 * The HMAC key of a `whsec_...` secret: the whole string as UTF-8 (spec, Webhook events). Made once
 * per subscription and batch of deliveries: a KeyObject signs about a quarter quicker than a key
 * given as a string or buffer, which is copied for every signature.
 */
export function signingKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

/** Hex HMAC-SHA256 of `<timestamp>.<body>` with the secret's key. */
export function signature(key: KeyObject, timestamp: number, body: string): string {
  return createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex');
}

/**
 * The signature headers of one attempt, signed at send time so the receiver's 300-second window
 * holds on every retry. During a rotation's grace `keys` are [new, previous]: both signatures,
 * comma-separated, new first.
 */
export function signatureHeaders(keys: KeyObject[], now: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'x-webhook-timestamp': String(timestamp),
    'x-webhook-signature': keys.length === 1 ? signature(keys[0]!, timestamp, body) : keys.map((key) => signature(key, timestamp, body)).join(','),
  };
}

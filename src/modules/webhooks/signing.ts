import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** How reads show a secret: the prefix and its last four characters. */
export const maskedSecret = (lastFour: string): string => `${SECRET_PREFIX}...${lastFour}`;

export const lastFour = (secret: string): string => secret.slice(-4);

/** Hex HMAC-SHA256 of `<timestamp>.<body>`, keyed with the whole `whsec_...` string as UTF-8 (spec, Webhook events). */
export function signature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${body}`).digest('hex');
}

/**
 * The signature headers of one attempt, signed at send time so the receiver's 300-second window
 * holds on every retry. During a rotation's grace `secrets` is [new, previous]: both signatures,
 * comma-separated, new first.
 */
export function signatureHeaders(secrets: string[], now: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'x-webhook-timestamp': String(timestamp),
    'x-webhook-signature': secrets.map((secret) => signature(secret, timestamp, body)).join(','),
  };
}

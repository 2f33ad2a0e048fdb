import { createHash, randomBytes } from 'node:crypto';

/**
 * Opaque refresh tokens `<sessionId>.<secret>`: the session id finds the session, the 256-bit
 * secret proves possession; only its SHA-256 is stored (a fast hash is right for random secrets).
 */
export function newRefreshToken(sessionId: string): { token: string; hash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { token: `${sessionId}.${secret}`, hash: hashRefreshSecret(secret) };
}

export function hashRefreshSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

export function parseRefreshToken(token: string): { sessionId: string; secret: string } | null {
  const match = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/.exec(token);
  return match ? { sessionId: match[1]!, secret: match[2]! } : null;
}

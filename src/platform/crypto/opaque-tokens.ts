import { hash, randomBytes } from 'node:crypto';

/**
 * Opaque bearer secrets `<id>.<secret>` (refresh tokens, reset and magic links): the UUID finds
 * the aggregate, the 256-bit secret proves possession; only its SHA-256 is stored (a fast hash is
 * right for random secrets; compare digests, never the secrets).
 */
export function newOpaqueToken(id: string): { token: string; hash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { token: `${id}.${secret}`, hash: hashOpaqueSecret(secret) };
}

/** node's one-shot hash: no Hash object per call (half the cost of createHash's, which client authentication pays per token request). */
export function hashOpaqueSecret(secret: string): string {
  return hash('sha256', secret, 'base64url');
}

export function parseOpaqueToken(token: string): { id: string; secret: string } | null {
  const match = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/.exec(token);
  return match ? { id: match[1]!, secret: match[2]! } : null;
}

import { hash } from 'node:crypto';

/**
 * Claims of tokens already verified, keyed by the SHA-256 of the token (the map never holds a
 * bearer credential), each kept until the token's own expiry at the latest. Bounded: when full,
 * the oldest entry goes first.
 */
export class VerifiedTokens<Claims> {
  private readonly entries = new Map<string, { claims: Claims; expiresAtMs: number }>();

  constructor(private readonly maxEntries: number) {}

  static keyOf(token: string): string {
    // The one-shot hash: no Hash object per request (every authenticated request computes this).
    return hash('sha256', token, 'base64url');
  }

  /** The claims of a token verified before and not expired at `nowMs`, else undefined. */
  get(key: string, nowMs: number): Claims | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (nowMs < entry.expiresAtMs) return entry.claims;
    this.entries.delete(key);
    return undefined;
  }

  remember(key: string, claims: Claims, expiresAtMs: number): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { claims, expiresAtMs });
  }
}

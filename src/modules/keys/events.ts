import type { DomainEvent } from '../../platform/commands/decider.ts';

export type SigningAlgorithm = 'RS256' | 'HS256';

/** The private part travels only sealed by the master key (SecretBox), never in clear text. */
export type SigningKeyAdded = DomainEvent<
  'SigningKeyAdded',
  { kid: string; alg: SigningAlgorithm; publicJwk: Record<string, unknown> | null; sealedPrivateKey: string; createdAt: string }
>;

export type SigningKeyEvent = SigningKeyAdded;

/** One key ring for the whole service: tokens of every tenant are verified with the same JWKS. */
export const SIGNING_KEYS_STREAM = 'signingkeys-platform.keys';

import { z } from 'zod';
import type { JwsAlgorithm } from '../../platform/crypto/jws-signing.ts';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

export const SIGNING_ALGORITHMS = ['RS256', 'ES256', 'HS256'] as const satisfies readonly JwsAlgorithm[];
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

export const signingKeyAdded = defineEvent({
  type: 'SigningKeyAdded',
  description: 'A signing key of the key ring. The private part travels only sealed by the master key, never in clear text; HS256 keys have no public JWK; ES256 keys are P-256.',
  data: z.strictObject({
    kid: z.string(),
    alg: z.enum(SIGNING_ALGORITHMS),
    publicJwk: z.record(z.string(), z.unknown()).nullable(),
    sealedPrivateKey: z.string(),
    createdAt: z.string(),
  }),
  sensitive: ['sealedPrivateKey'],
});

export const signingKeyEvents = [signingKeyAdded];

export type SigningKeyAdded = EventOf<typeof signingKeyAdded>;
export type SigningKeyEvent = SigningKeyAdded;

/** One key ring for the whole service: tokens of every tenant are verified with the same JWKS. */
export const SIGNING_KEYS_STREAM = 'signingkeys-platform.keys';

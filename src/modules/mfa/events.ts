import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

export const SECOND_FACTOR_METHODS = ['totp', 'recovery_code'] as const;
export type SecondFactorMethod = (typeof SECOND_FACTOR_METHODS)[number];

/** How a code was proved: the TOTP time step it belongs to, or the hash of the recovery code spent. */
const proof = z.strictObject({ method: z.enum(SECOND_FACTOR_METHODS), step: z.number().int().optional(), codeHash: z.string().optional() });

export const totpSetupStarted = defineEvent({
  type: 'TotpSetupStarted',
  description: 'A TOTP secret was issued to the user, not yet confirmed by a code; it travels only sealed by the master key.',
  data: z.strictObject({ userId: z.string(), sealedSecret: z.string() }),
  sensitive: ['sealedSecret'],
});
export const totpEnabled = defineEvent({
  type: 'TotpEnabled',
  description: 'The pending secret was confirmed by a code of time step `step`; recovery codes are SHA-256 hashes of high-entropy codes.',
  data: z.strictObject({ userId: z.string(), step: z.number().int(), recoveryCodeHashes: z.array(z.string()) }),
  sensitive: ['recoveryCodeHashes'],
});
export const totpDisabled = defineEvent({
  type: 'TotpDisabled',
  description: 'The user turned TOTP off with a code (a TOTP code or a recovery code); the secret and recovery codes are void.',
  data: z.strictObject({ userId: z.string(), proof }),
  sensitive: ['proof.codeHash'],
});
export const secondFactorUsed = defineEvent({
  type: 'SecondFactorUsed',
  description: 'A code passed a sign-in challenge: its TOTP step or recovery code is spent (the login stream records the sign-in).',
  data: z.strictObject({ userId: z.string(), proof }),
  sensitive: ['proof.codeHash'],
});

export const mfaEvents = [totpSetupStarted, totpEnabled, totpDisabled, secondFactorUsed];

export type TotpSetupStarted = EventOf<typeof totpSetupStarted>;
export type TotpEnabled = EventOf<typeof totpEnabled>;
export type TotpDisabled = EventOf<typeof totpDisabled>;
export type SecondFactorUsed = EventOf<typeof secondFactorUsed>;
export type MfaEvent = EventOf<(typeof mfaEvents)[number]>;
export type FactorProof = SecondFactorUsed['data']['proof'];

/** A user's second factors: one stream per account, apart from the profile and the login attempts. */
export const mfaStreamId = (tenant: string, userId: string): string => `mfa-${tenant}.${userId}`;

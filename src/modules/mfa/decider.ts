import type { Decider } from '../../platform/commands/decider.ts';
import { invalidCode, mfaError } from './errors.ts';
import type { FactorProof, MfaEvent, SecondFactorMethod } from './events.ts';

/** A user's second factors as the write side knows them. */
export interface FactorsState {
  /** Issued by setup, waiting for its first code. */
  pendingSecret: string | null;
  /** The confirmed secret (sealed), when TOTP is on. */
  totpSecret: string | null;
  /** The last TOTP time step accepted: no code of it or before counts again. */
  lastStep: number;
  /** Hashes of the recovery codes not spent yet. */
  recoveryCodes: string[];
}

export type FactorsCommand =
  | { type: 'StartTotpSetup'; userId: string; sealedSecret: string }
  | { type: 'EnableTotp'; userId: string; sealedSecret: string; step: number; recoveryCodeHashes: string[] }
  | { type: 'DisableTotp'; userId: string; proof: FactorProof }
  | { type: 'UseSecondFactor'; userId: string; proof: FactorProof };

/** The methods a sign-in may be completed with (what login answers as availableMethods). */
export const availableMethods = (state: FactorsState): SecondFactorMethod[] =>
  state.totpSecret ? (state.recoveryCodes.length > 0 ? ['totp', 'recovery_code'] : ['totp']) : [];


/** A proof still good on this state: a later TOTP step, or a recovery code not spent. */
function assertUnspent(state: FactorsState, proof: FactorProof): void {
  const good = proof.method === 'totp' ? proof.step !== undefined && proof.step > state.lastStep : proof.codeHash !== undefined && state.recoveryCodes.includes(proof.codeHash);
  if (!good) throw invalidCode();
}

const spent = (state: FactorsState, proof: FactorProof): FactorsState =>
  proof.method === 'totp'
    ? { ...state, lastStep: Math.max(state.lastStep, proof.step ?? state.lastStep) }
    : { ...state, recoveryCodes: state.recoveryCodes.filter((hash) => hash !== proof.codeHash) };

export const factorsDecider: Decider<FactorsState, FactorsCommand, MfaEvent> = {
  initialState: () => ({ pendingSecret: null, totpSecret: null, lastStep: 0, recoveryCodes: [] }),

  evolve(state, event) {
    switch (event.type) {
      case 'TotpSetupStarted':
        return { ...state, pendingSecret: event.data.sealedSecret };
      case 'TotpEnabled':
        return { pendingSecret: null, totpSecret: state.pendingSecret, lastStep: Math.max(state.lastStep, event.data.step), recoveryCodes: event.data.recoveryCodeHashes };
      case 'TotpDisabled':
        return { ...spent(state, event.data.proof), pendingSecret: null, totpSecret: null, recoveryCodes: [] };
      case 'SecondFactorUsed':
        return spent(state, event.data.proof);
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    const { userId } = command;
    switch (command.type) {
      case 'StartTotpSetup':
        if (state.totpSecret) throw mfaError('TOTP_ALREADY_ENABLED', 'TOTP is already enabled; disable it first to set up a new secret');
        return [{ type: 'TotpSetupStarted', data: { userId, sealedSecret: command.sealedSecret } }];
      case 'EnableTotp':
        if (state.totpSecret) throw mfaError('TOTP_ALREADY_ENABLED', 'TOTP is already enabled');
        // The code was checked against this secret: a setup started since then makes it stale.
        if (!state.pendingSecret || state.pendingSecret !== command.sealedSecret) throw mfaError('TOTP_NOT_SET_UP', 'Start the TOTP setup first');
        assertUnspent(state, { method: 'totp', step: command.step });
        return [{ type: 'TotpEnabled', data: { userId, step: command.step, recoveryCodeHashes: command.recoveryCodeHashes } }];
      case 'DisableTotp':
        if (!state.totpSecret) throw mfaError('TOTP_NOT_ENABLED', 'TOTP is not enabled');
        assertUnspent(state, command.proof);
        return [{ type: 'TotpDisabled', data: { userId, proof: command.proof } }];
      case 'UseSecondFactor':
        if (!state.totpSecret) throw invalidCode();
        assertUnspent(state, command.proof);
        return [{ type: 'SecondFactorUsed', data: { userId, proof: command.proof } }];
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};

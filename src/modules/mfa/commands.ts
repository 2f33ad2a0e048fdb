import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, loadState, toNewEvents, type CommandDeps, type LoadedState } from '../../platform/commands/handle-command.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { WrongExpectedVersionError } from '../../platform/eventstore/errors.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { factorsDecider, type FactorsCommand, type FactorsState } from './decider.ts';
import { codeMethod } from './code-form.ts';
import { invalidCode, mfaError } from './errors.ts';
import { mfaStreamId, type FactorProof } from './events.ts';
import { newRecoveryCodes, recoveryCodeHash } from './recovery-codes.ts';
import { matchingStep, newTotpSecret, otpauthUrl, totpDigits } from './totp.ts';

/** The account's lockout, kept by the login stream: codes checked here count as guesses there. */
export interface CodeGuard {
  /**
   * Decides a code checked outside a sign-in with the account's lockout: a right one commits
   * `appendsIfRight` with the check; a wrong one counts as a guess and throws INVALID_OTP; a locked
   * account (or one this guess locks) throws ACCOUNT_LOCKED.
   */
  checkCode(tenant: string, userId: string, purpose: 'disable_totp', codeMatches: boolean, context: CommandContext, appendsIfRight: () => StreamAppend[]): Promise<void>;
}

export interface MfaDeps extends CommandDeps {
  secretBox: SecretBox;
  guard: CodeGuard;
}

/**
 * What a code proves on a state: a TOTP step not used before (for `totp`), or a recovery code not
 * spent (for `recovery_code`); null when it proves nothing. Without a method, the code's form tells.
 */
export function proofOf(secretBox: SecretBox, state: FactorsState, code: string, at: Date, method = codeMethod(code)): FactorProof | null {
  if (method === 'totp') {
    const step = state.totpSecret ? stepOf(secretBox, state.totpSecret, code, at, state.lastStep) : null;
    return step === null ? null : { method: 'totp', step };
  }
  const codeHash = recoveryCodeHash(code);
  return state.recoveryCodes.includes(codeHash) ? { method: 'recovery_code', codeHash } : null;
}

/** The append of a factors command decided on the factors as read (their revision expected), for the caller to commit with other streams. */
function factorsAppend(deps: CommandDeps, tenant: string, userId: string, factors: LoadedState<FactorsState>, command: FactorsCommand, context: CommandContext): StreamAppend {
  const events = factorsDecider.decide(command, factors.state);
  return { streamId: mfaStreamId(tenant, userId), expectedRevision: factors.revision ?? 'no_stream', events: toNewEvents(events, context, deps.clock) };
}

/**
 * The append that spends a proof on the factors as read: committed with the sign-in it completes,
 * so two sign-ins cannot spend one code.
 */
export const spendAppend = (deps: CommandDeps, tenant: string, userId: string, factors: LoadedState<FactorsState>, proof: FactorProof, context: CommandContext) =>
  factorsAppend(deps, tenant, userId, factors, { type: 'UseSecondFactor', userId, proof }, context);

/** A factors append that lost to another writer: the code it spent, or the factor it changed, is no longer as read. */
export const isFactorsConflict = (error: unknown, tenant: string, userId: string): boolean =>
  error instanceof WrongExpectedVersionError && error.streamId === mfaStreamId(tenant, userId);

/** The unused time step a typed code belongs to, for a sealed secret. */
const stepOf = (secretBox: SecretBox, sealedSecret: string, code: string, at: Date, lastStep: number) =>
  matchingStep(secretBox.open(sealedSecret), totpDigits(code), at, lastStep);

export const factorsRead = (tenant: string, userId: string) => ({ decider: factorsDecider, streamId: mfaStreamId(tenant, userId) });

/** TOTP enrolment of the user's own account (decisions.md, Two-factor). */
export function mfaCommands(deps: MfaDeps) {
  return {
    /** A new secret (replacing any pending one), shown once: the app scans otpauthUrl. */
    async setup(tenant: string, userId: string, account: string, context: CommandContext) {
      const secret = newTotpSecret();
      await handleCommand(deps, factorsDecider, mfaStreamId(tenant, userId), { type: 'StartTotpSetup', userId, sealedSecret: deps.secretBox.seal(secret) }, context);
      return { secret, otpauthUrl: otpauthUrl(tenant, account, secret) };
    },

    /** Confirms the pending secret with a code of it: TOTP is on, and ten recovery codes are shown once. */
    async enable(tenant: string, userId: string, code: string, context: CommandContext) {
      const { state } = await loadState(deps, factorsDecider, mfaStreamId(tenant, userId));
      if (state.totpSecret) throw mfaError('TOTP_ALREADY_ENABLED', 'TOTP is already enabled');
      if (!state.pendingSecret) throw mfaError('TOTP_NOT_SET_UP', 'Start the TOTP setup first');
      const step = stepOf(deps.secretBox, state.pendingSecret, code, deps.clock.now(), state.lastStep);
      if (step === null) throw invalidCode();
      const recoveryCodes = newRecoveryCodes();
      const command = { type: 'EnableTotp', userId, sealedSecret: state.pendingSecret, step, recoveryCodeHashes: recoveryCodes.map(recoveryCodeHash) } as const;
      await handleCommand(deps, factorsDecider, mfaStreamId(tenant, userId), command, context);
      return { totpEnabled: true as const, recoveryCodes };
    },

    /**
     * Turns TOTP off with a TOTP code or a recovery code (the user who lost the device holds the
     * latter). A wrong code counts towards the account's lockout.
     */
    async disable(tenant: string, userId: string, code: string, context: CommandContext) {
      const factors = await loadState(deps, factorsDecider, mfaStreamId(tenant, userId));
      if (!factors.state.totpSecret) throw mfaError('TOTP_NOT_ENABLED', 'TOTP is not enabled');
      const proof = proofOf(deps.secretBox, factors.state, code, deps.clock.now());
      try {
        await deps.guard.checkCode(tenant, userId, 'disable_totp', proof !== null, context, () => [
          factorsAppend(deps, tenant, userId, factors, { type: 'DisableTotp', userId, proof: proof! }, context),
        ]);
      } catch (error) {
        if (isFactorsConflict(error, tenant, userId)) throw invalidCode();
        throw error;
      }
      return { totpEnabled: false as const };
    },
  };
}

export type MfaCommands = ReturnType<typeof mfaCommands>;

import { describe, expect, it } from 'vitest';
import { availableMethods, factorsDecider, type FactorsCommand } from '../../../src/modules/mfa/decider.ts';
import type { MfaEvent } from '../../../src/modules/mfa/events.ts';
import { fold } from '../../../src/platform/commands/decider.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const userId = 'u1';
const setup = (sealedSecret = 'sealed-1'): MfaEvent => ({ type: 'TotpSetupStarted', data: { userId, sealedSecret } });
const enabled = (step = 100, recoveryCodeHashes = ['r1', 'r2']): MfaEvent => ({ type: 'TotpEnabled', data: { userId, step, recoveryCodeHashes } });
const totp = (step: number) => ({ method: 'totp' as const, step });
const recovery = (codeHash: string) => ({ method: 'recovery_code' as const, codeHash });
const used = (proof: ReturnType<typeof totp> | ReturnType<typeof recovery>): MfaEvent => ({ type: 'SecondFactorUsed', data: { userId, proof } });

describe('second-factor decider', () => {
  const spec = deciderSpec(factorsDecider);

  it('sets up a pending secret, replacing a pending one, but not over an enabled one', () => {
    spec.given([]).when({ type: 'StartTotpSetup', userId, sealedSecret: 's' }).then([setup('s')]);
    spec.given([setup()]).when({ type: 'StartTotpSetup', userId, sealedSecret: 's2' }).then([setup('s2')]);
    spec.given([setup(), enabled()]).when({ type: 'StartTotpSetup', userId, sealedSecret: 's2' }).thenThrows('TOTP_ALREADY_ENABLED');
  });

  it('enables only the pending secret the code was checked against', () => {
    const enable = (sealedSecret: string): FactorsCommand => ({ type: 'EnableTotp', userId, sealedSecret, step: 100, recoveryCodeHashes: ['r1', 'r2'] });
    spec.given([setup()]).when(enable('sealed-1')).then([enabled()]);
    spec.given([]).when(enable('sealed-1')).thenThrows('TOTP_NOT_SET_UP');
    // A setup started after the code was checked: the code proved another secret.
    spec.given([setup(), setup('sealed-2')]).when(enable('sealed-1')).thenThrows('TOTP_NOT_SET_UP');
    spec.given([setup(), enabled()]).when(enable('sealed-1')).thenThrows('TOTP_ALREADY_ENABLED');
    expect(fold(factorsDecider, [setup(), enabled()])).toEqual({ pendingSecret: null, totpSecret: 'sealed-1', lastStep: 100, recoveryCodes: ['r1', 'r2'] });
    expect(availableMethods(fold(factorsDecider, [setup()]))).toEqual([]);
    expect(availableMethods(fold(factorsDecider, [setup(), enabled()]))).toEqual(['totp', 'recovery_code']);
  });

  it('accepts a TOTP step once: never the step that enabled it nor any before the last used', () => {
    const given = [setup(), enabled(100)];
    spec.given(given).when({ type: 'UseSecondFactor', userId, proof: totp(101) }).then([used(totp(101))]);
    spec.given(given).when({ type: 'UseSecondFactor', userId, proof: totp(100) }).thenThrows('INVALID_OTP');
    spec.given([...given, used(totp(102))]).when({ type: 'UseSecondFactor', userId, proof: totp(101) }).thenThrows('INVALID_OTP');
    spec.given([...given, used(totp(102))]).when({ type: 'DisableTotp', userId, proof: totp(102) }).thenThrows('INVALID_OTP');
  });

  it('spends each recovery code once; the last one spent leaves TOTP alone', () => {
    const given = [setup(), enabled(100, ['r1'])];
    spec.given(given).when({ type: 'UseSecondFactor', userId, proof: recovery('r1') }).then([used(recovery('r1'))]);
    spec.given([...given, used(recovery('r1'))]).when({ type: 'UseSecondFactor', userId, proof: recovery('r1') }).thenThrows('INVALID_OTP');
    spec.given(given).when({ type: 'UseSecondFactor', userId, proof: recovery('nope') }).thenThrows('INVALID_OTP');
    expect(availableMethods(fold(factorsDecider, [...given, used(recovery('r1'))]))).toEqual(['totp']);
  });

  it('disables with a code, voiding the secret and the recovery codes; nothing to use afterwards', () => {
    const given = [setup(), enabled(100, ['r1'])];
    const disabled: MfaEvent = { type: 'TotpDisabled', data: { userId, proof: recovery('r1') } };
    spec.given(given).when({ type: 'DisableTotp', userId, proof: recovery('r1') }).then([disabled]);
    spec.given([]).when({ type: 'DisableTotp', userId, proof: totp(5) }).thenThrows('TOTP_NOT_ENABLED');
    spec.given([...given, disabled]).when({ type: 'UseSecondFactor', userId, proof: totp(101) }).thenThrows('INVALID_OTP');
    expect(fold(factorsDecider, [...given, disabled])).toEqual({ pendingSecret: null, totpSecret: null, lastStep: 100, recoveryCodes: [] });
    // A step spent on disabling stays spent for a new secret's enabling.
    const byTotp: MfaEvent = { type: 'TotpDisabled', data: { userId, proof: totp(105) } };
    spec.given([...given, byTotp, setup('sealed-2')]).when({ type: 'EnableTotp', userId, sealedSecret: 'sealed-2', step: 105, recoveryCodeHashes: [] }).thenThrows('INVALID_OTP');
  });
});

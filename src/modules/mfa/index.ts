// The public surface of the mfa module: other modules, the composition root and the read models import only this.
export { codeFields, codeMethod } from './code-form.ts';
export { factorsRead, isFactorsConflict, mfaCommands, proofOf, spendAppend } from './commands.ts';
export type { CodeGuard } from './commands.ts';
export { availableMethods, factorsDecider } from './decider.ts';
export type { FactorsState } from './decider.ts';
export { errorStatuses, invalidCode } from './errors.ts';
export { SECOND_FACTOR_METHODS, mfaEvents, mfaStreamId } from './events.ts';
export type { MfaEvent, SecondFactorMethod, SecondFactorUsed, TotpDisabled, TotpEnabled, TotpSetupStarted } from './events.ts';
export { registerMfaRoutes } from './routes.ts';

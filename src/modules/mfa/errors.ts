import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

/** Codes of the second factors (decisions.md, Two-factor), with their statuses. */
export const errorStatuses = {
  /** A wrong code, one already used, or one of a time step long gone (the spec's phone verification code). */
  INVALID_OTP: 400,
  TOTP_NOT_SET_UP: 400,
  TOTP_NOT_ENABLED: 400,
  TOTP_ALREADY_ENABLED: 409,
} as const satisfies ErrorStatuses;

export const mfaError = domainErrors(errorStatuses);

export const invalidCode = () => mfaError('INVALID_OTP', 'The code is not valid');

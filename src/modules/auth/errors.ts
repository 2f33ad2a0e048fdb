import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

/** Codes of logging in, signup and the token endpoint (RFC 6749's lower-case ones), with their statuses. */
export const errorStatuses = {
  INVALID_CREDENTIALS: 401,
  ACCOUNT_LOCKED: 423,
  /** An mfaToken that names no open challenge: unknown, used, expired, voided (lockout, unlock), or of an account whose factor is gone. */
  MFA_TOKEN_INVALID: 401,
  SIGNUP_DISABLED: 403,
  invalid_request: 400,
  unsupported_grant_type: 400,
  /** x-tenant names another tenant than the grant's credential (decisions.md: both given must agree, else 401). */
  GRANT_OF_OTHER_TENANT: { status: 401, code: 'invalid_grant' },
} as const satisfies ErrorStatuses;

export const authError = domainErrors(errorStatuses);

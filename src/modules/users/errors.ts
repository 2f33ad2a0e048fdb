import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

/** Codes the users context raises, and their HTTP statuses at the edge. */
export const errorStatuses = {
  EMAIL_TAKEN: 409,
  USERNAME_TAKEN: 409,
  USER_EXISTS: 409,
  INVALID_CREDENTIALS: 401,
  SELF_ROLE_CHANGE: 403,
} as const satisfies ErrorStatuses;

export const userError = domainErrors(errorStatuses);

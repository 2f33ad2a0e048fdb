import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

/** A bad e-mail link is a client error named like a bad token (spec): 400, not an access token's 401. */
export const errorStatuses = {
  LINK_INVALID: { status: 400, code: 'TOKEN_INVALID' },
  LINK_EXPIRED: { status: 400, code: 'TOKEN_EXPIRED' },
} as const satisfies ErrorStatuses;

export const linkError = domainErrors(errorStatuses);

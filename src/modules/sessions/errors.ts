import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

/** A refresh token that cannot be used (RFC 6749 section 5.2). */
export const errorStatuses = { invalid_grant: 400 } as const satisfies ErrorStatuses;

export const sessionError = domainErrors(errorStatuses);

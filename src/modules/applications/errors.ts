import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

/** Codes the applications context raises, and their HTTP statuses at the edge. */
export const errorStatuses = {
  APPLICATION_EXISTS: 409,
  /** spa and native applications are public clients: they have no secret to rotate. */
  APPLICATION_IS_PUBLIC: 409,
} as const satisfies ErrorStatuses;

export const applicationError = domainErrors(errorStatuses);

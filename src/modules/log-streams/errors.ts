import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

/** Codes the log-streams context raises, and their HTTP statuses at the edge. */
export const errorStatuses = { STREAM_NAME_TAKEN: 409, TEST_DELIVERY_FAILED: 400 } as const satisfies ErrorStatuses;

export const logStreamError = domainErrors(errorStatuses);

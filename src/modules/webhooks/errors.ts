import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

/** Codes the webhooks context raises, and their HTTP statuses at the edge. */
export const errorStatuses = { WEBHOOK_EXISTS: 409, DELIVERY_NOT_FAILED: 409 } as const satisfies ErrorStatuses;

export const webhookError = domainErrors(errorStatuses);

import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

export const errorStatuses = { ROLE_NAME_TAKEN: 409, ROLE_EXISTS: 409 } as const satisfies ErrorStatuses;

export const roleError = domainErrors(errorStatuses);

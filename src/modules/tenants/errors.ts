import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

export const errorStatuses = { TENANT_EXISTS: 409 } as const satisfies ErrorStatuses;

export const tenantError = domainErrors(errorStatuses);

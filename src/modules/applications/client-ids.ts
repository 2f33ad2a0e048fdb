import { TENANT_NAME } from '../../platform/http/tenant-resolution.ts';
import { isUuid } from '../../platform/ids.ts';

/**
 * client_id is `<tenant>.<applicationId>`: unique across tenants by construction, and it names
 * the tenant for standard clients that send no x-tenant (decisions.md, OAuth 2.0). The prefix is a
 * claim, not a proof: the application is read from that tenant's stream, so a rewritten prefix
 * finds none.
 */
export const clientIdOf = (tenant: string, applicationId: string): string => `${tenant}.${applicationId}`;

export function parseClientId(clientId: string): { tenant: string; applicationId: string } | null {
  const dot = clientId.indexOf('.');
  const tenant = clientId.slice(0, dot);
  const applicationId = clientId.slice(dot + 1);
  return dot > 0 && TENANT_NAME.test(tenant) && isUuid(applicationId) ? { tenant, applicationId } : null;
}

/** The tenant a client_id names (unverified), or null. */
export const tenantNamedByClientId = (clientId: string | undefined): string | null => (clientId ? (parseClientId(clientId)?.tenant ?? null) : null);

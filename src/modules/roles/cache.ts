import { isUuid } from '../../platform/ids.ts';
import { readModelCache, type AppliedEventsSource } from '../../platform/projections/read-model-cache.ts';
import type { Role, RoleQueries } from './queries.ts';

const MAX_TENANTS = 10_000;

/**
 * The roles read model's answers from memory: each tenant's roles are loaded once and dropped when
 * the roles projection applies a change of that tenant, in every instance. Authorizing a request
 * (the token's role names to permissions) then costs no query.
 */
export function cachedRoles(source: AppliedEventsSource, queries: Pick<RoleQueries, 'list'>) {
  const byTenant = readModelCache<Role[]>(source, {
    maxEntries: MAX_TENANTS,
    load: (tenant) => queries.list(tenant),
    stale: { roles: (event) => [event.metadata.tenantId] },
  });
  return {
    list: (tenant: string): Promise<Role[]> => byTenant.get(tenant),
    async get(tenant: string, roleId: string): Promise<Role | null> {
      if (!isUuid(roleId)) return null;
      return (await byTenant.get(tenant)).find((role) => role.id === roleId) ?? null;
    },
    /** Roles by name, case-insensitively; missing names are simply absent from the answer. */
    async byNames(tenant: string, names: string[]): Promise<Role[]> {
      const wanted = new Set(names.map((name) => name.toLowerCase()));
      return (await byTenant.get(tenant)).filter((role) => wanted.has(role.name.toLowerCase()));
    },
    /** The permissions the roles named exactly so (a token's `roles` claim) hold together. */
    async permissionsOf(tenant: string, names: readonly string[]): Promise<Set<string>> {
      const held = new Set(names);
      return new Set((await byTenant.get(tenant)).filter((role) => held.has(role.name)).flatMap((role) => role.permissions));
    },
  };
}

export type CachedRoles = ReturnType<typeof cachedRoles>;

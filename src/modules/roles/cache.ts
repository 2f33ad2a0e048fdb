import { isUuid } from '../../platform/ids.ts';
import { readModelCache, type AppliedEventsSource } from '../../platform/projections/read-model-cache.ts';
import type { Role, RoleQueries } from './queries.ts';

const MAX_TENANTS = 10_000;
/** Distinct role-name lists remembered per tenant. */
const MAX_NAME_SETS = 1_000;

/**
 * The roles read model's answers from memory: each tenant's roles are loaded once and dropped when
 * the roles projection applies a change of that tenant, in every instance. Authorizing a request
 * (the token's role names to permissions) then costs no query.
 */
export function cachedRoles(source: AppliedEventsSource, queries: Pick<RoleQueries, 'list'>) {
  // Every authenticated request turns its token's role names into permissions: the answer is kept
  // per loaded list of roles (a reload is a new array, so a change is never answered from here).
  const permissionSets = new WeakMap<Role[], Map<string, ReadonlySet<string>>>();
  const byTenant = readModelCache<Role[]>(source, {
    maxEntries: MAX_TENANTS,
    load: (tenant) => queries.list(tenant),
    stale: { roles: (event) => [event.metadata.tenantId] },
  });
  const permissionsIn = (roles: Role[], names: readonly string[]): ReadonlySet<string> => {
    let byNames = permissionSets.get(roles);
    if (!byNames) permissionSets.set(roles, (byNames = new Map()));
    const key = names.join('\n');
    let permissions = byNames.get(key);
    if (!permissions) {
      const held = new Set(names);
      permissions = new Set(roles.filter((role) => held.has(role.name)).flatMap((role) => role.permissions));
      // Bounded: a token names few roles, but the combinations are the callers' to choose.
      if (byNames.size >= MAX_NAME_SETS) byNames.clear();
      byNames.set(key, permissions);
    }
    return permissions;
  };
  return {
    list: (tenant: string): Promise<Role[]> => byTenant.get(tenant),
    /** The tenant's roles (shared: never change them) without a promise once loaded, else the load's promise. */
    current: (tenant: string): Role[] | Promise<Role[]> => byTenant.current(tenant),
    async get(tenant: string, roleId: string): Promise<Role | null> {
      if (!isUuid(roleId)) return null;
      return (await byTenant.get(tenant)).find((role) => role.id === roleId) ?? null;
    },
    /** Roles by name, case-insensitively; missing names are simply absent from the answer. */
    async byNames(tenant: string, names: string[]): Promise<Role[]> {
      const wanted = new Set(names.map((name) => name.toLowerCase()));
      return (await byTenant.get(tenant)).filter((role) => wanted.has(role.name.toLowerCase()));
    },
    /**
     * The permissions the roles named exactly so (a token's `roles` claim) hold together (shared:
     * never change it); without a promise once the tenant's roles are loaded.
     */
    permissionsOf(tenant: string, names: readonly string[]): ReadonlySet<string> | Promise<ReadonlySet<string>> {
      const roles = byTenant.current(tenant);
      return roles instanceof Promise ? roles.then((loaded) => permissionsIn(loaded, names)) : permissionsIn(roles, names);
    },
  };
}

export type CachedRoles = ReturnType<typeof cachedRoles>;

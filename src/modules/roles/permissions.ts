import { z } from 'zod';

/** Every permission the service knows; a role may only hold these. admin:all satisfies all. */
export const PERMISSIONS = [
  'admin:all',
  'manage:users',
  'manage:sessions',
  'view:audit',
  'view:fga_models',
  'manage:fga_models',
  'view:fga_tuples',
  'manage:fga_tuples',
  'debug:fga',
  'manage:organizations',
  'manage:groups',
  'manage:applications',
  'manage:webhooks',
  'manage:actions',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const permissionSchema = z.enum(PERMISSIONS);

const isPermission = (name: string): name is Permission => (PERMISSIONS as readonly string[]).includes(name);

/**
 * The permissions a token may use when it carries a `scope` claim (decisions.md, OAuth 2.0): the
 * scope's permission names the holder has, where a held admin:all has each of them. A client token
 * holds no roles: its scope was checked against the application when it was issued, so `held` is
 * null and every permission name in the scope counts.
 */
export function permissionsWithinScope(held: ReadonlySet<string> | null, scope: readonly string[]): Set<string> {
  return new Set(scope.filter((name) => isPermission(name) && (held === null || held.has(name) || held.has('admin:all'))));
}

/**
 * The first of `wanted` that `held` does not cover, or undefined: what a caller may not hand on (a
 * role to grant, an application's scopes). admin:all covers every permission; `null` (the service
 * itself: bootstrap, a new tenant's first administrator) covers everything.
 */
export function beyondHeld(held: ReadonlySet<string> | null, wanted: readonly string[]): string | undefined {
  if (held === null || held.has('admin:all')) return undefined;
  return wanted.find((permission) => !held.has(permission));
}

export function grants(held: Iterable<string>, required: Permission): boolean {
  for (const permission of held) if (permission === 'admin:all' || permission === required) return true;
  return false;
}

/** The roles every new tenant starts with (decisions.md). */
export const DEFAULT_ROLES = [
  { name: 'admin', description: 'Full access to the tenant', color: '#d32f2f', permissions: [...PERMISSIONS] },
  { name: 'user', description: 'Default role of end users', color: '#1976d2', permissions: [] },
] as const;

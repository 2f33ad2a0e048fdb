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
  'manage:webhooks',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const permissionSchema = z.enum(PERMISSIONS);

export function grants(held: Iterable<string>, required: Permission): boolean {
  for (const permission of held) if (permission === 'admin:all' || permission === required) return true;
  return false;
}

/** The roles every new tenant starts with (decisions.md). */
export const DEFAULT_ROLES = [
  { name: 'admin', description: 'Full access to the tenant', color: '#d32f2f', permissions: [...PERMISSIONS] },
  { name: 'user', description: 'Default role of end users', color: '#1976d2', permissions: [] },
] as const;

// The public surface of the roles module: other modules, the composition root and the read models import only this.
export { cachedRoles } from './cache.ts';
export type { CachedRoles } from './cache.ts';
export { defaultRoleAppends, roleCommands } from './commands.ts';
export { roleDecider } from './decider.ts';
export { errorStatuses } from './errors.ts';
export { roleEvents, roleStreamId } from './events.ts';
export type { RoleCreated, RoleDeleted, RoleEvent, RoleUpdated } from './events.ts';
export { beyondHeld, grants, PERMISSIONS, permissionsWithinScope } from './permissions.ts';
export type { Permission } from './permissions.ts';
export { roleQueries } from './queries.ts';
export type { Role, RoleQueries } from './queries.ts';
export { registerRoleRoutes } from './routes.ts';

// The public surface of the tenants module: other modules, the composition root and the read models import only this.
export { bootstrapPlatformTenant } from './bootstrap.ts';
export { cachedTenantLookup } from './cache.ts';
export { tenantCommands } from './commands.ts';
export { errorStatuses } from './errors.ts';
export { tenantEvents } from './events.ts';
export type { TenantCreated, TenantDeleted, TenantEvent, TenantUpdated } from './events.ts';
export { tenantQueries } from './queries.ts';
export { registerTenantRoutes } from './routes.ts';

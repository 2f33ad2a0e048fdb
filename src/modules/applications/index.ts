// The public surface of the applications module: other modules, the composition root and the read models import only this.
export { clientIdOf, parseClientId, tenantNamedByClientId } from './client-ids.ts';
export { secretMatches } from './client-secrets.ts';
export { applicationByClientId, applicationCommands } from './commands.ts';
export { cachedApplications } from './cache.ts';
export type { ApplicationDirectory, CachedApplications } from './cache.ts';
export type { ApplicationCommands } from './commands.ts';
export type { Application } from './decider.ts';
export { errorStatuses } from './errors.ts';
export { applicationEvents } from './events.ts';
export type { ApplicationCreated, ApplicationDeleted, ApplicationEvent, ApplicationSecretRotated, ApplicationUpdated } from './events.ts';
export { registerApplicationCors } from './cors.ts';
export { applicationQueries } from './queries.ts';
export type { ApplicationQueries } from './queries.ts';
export { registerApplicationRoutes } from './routes.ts';
export { CLIENT_SCOPES, GRANT_TYPES, isPublicType } from './rules.ts';

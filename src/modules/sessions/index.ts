// The public surface of the sessions module: other modules, the composition root and the read models import only this.
export { SessionActivity } from './activity.ts';
export { sessionCommands } from './commands.ts';
export type { SessionCommands } from './commands.ts';
export { invalidGrant } from './decider.ts';
export { deviceLabel } from './device-label.ts';
export { errorStatuses } from './errors.ts';
export { sessionActivityTypes, sessionEvents } from './events.ts';
export type { SessionEvent, SessionExpired, SessionRefreshed, SessionRevoked, SessionStarted, SessionUsed } from './events.ts';
export { SessionExpirySweep } from './expiry-sweep.ts';
export { sessionQueries } from './queries.ts';
export { sessionReactions } from './reactions.ts';
export { parseRefreshToken, tenantNamedByRefreshToken } from './refresh-tokens.ts';
export { registerSessionRoutes } from './routes.ts';

// The public surface of the oauth module: other modules, the composition root and the read models import only this.
export { authorizationCodeEvents } from './code-events.ts';
export type { AuthorizationCodeEvent } from './code-events.ts';
export { deviceAuthorizationEvents } from './device-events.ts';
export type { DeviceAuthorizationEvent } from './device-events.ts';
export { errorStatuses } from './errors.ts';
export { oauthModule, OAUTH_GRANT_ERRORS } from './module.ts';
export { oauthRateLimitRules } from './rate-limits.ts';

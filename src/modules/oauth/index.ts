// The public surface of the oauth module: other modules, the composition root and the read models import only this.
export { errorStatuses } from './errors.ts';
export { oauthGrants, OAUTH_GRANT_ERRORS } from './grants.ts';

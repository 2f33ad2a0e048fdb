// The public surface of the auth module: other modules, the composition root and the read models import only this.
export { tokenAuthenticator } from './authenticator.ts';
export { registerCredentialRoutes } from './credential-routes.ts';
export { errorStatuses } from './errors.ts';
export { loginEvents, loginStreamId } from './events.ts';
export type { AccountLocked, AccountUnlocked, LoginEvent, LoginFailed, LoginSucceeded } from './events.ts';
export { linkDelivery } from './link-delivery.ts';
export { registerLinkPages } from './link-pages.ts';
export { lockoutCommands } from './lockout.ts';
export { lockedUntil, loginDecider } from './login-decider.ts';
export { authenticatedSessions, passwordLogin } from './login.ts';
export { magicLinks } from './magic-link.ts';
export { passwordFlows } from './password-flows.ts';
export { registerAuthRoutes } from './routes.ts';
export { signup } from './signup.ts';
export { grantRegistry } from './token-endpoint.ts';
export { TokenService } from './tokens.ts';
export { userinfoClaims } from './userinfo.ts';
export { authRateLimitRules } from './rate-limits.ts';

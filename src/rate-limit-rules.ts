import { authRateLimitRules } from './modules/auth/index.ts';
import { keysRateLimitRules } from './modules/keys/index.ts';
import { oauthRateLimitRules } from './modules/oauth/index.ts';
import { routeRules } from './platform/http/rate-limit/tiers.ts';

/** The one route-to-tier table: the platform's rules, each module's, the fallbacks (first match wins). */
export const rateLimitRules = routeRules([
  // Ahead of the auth rules: device-code polls leave the token endpoint's auth tier.
  ...oauthRateLimitRules,
  ...authRateLimitRules,
  ...keysRateLimitRules,
  // SCIM (next capabilities): the spec's Public tier.
  { path: '/api/scim/*', tier: 'public' },
]);

import { authRateLimitRules } from './modules/auth/index.ts';
import { keysRateLimitRules } from './modules/keys/index.ts';
import { routeRules } from './platform/http/rate-limit/tiers.ts';

/** The one route-to-tier table: the platform's rules, each module's, the fallbacks (first match wins). */
export const rateLimitRules = routeRules([
  ...authRateLimitRules,
  ...keysRateLimitRules,
  // SCIM (next capabilities): the spec's Public tier.
  { path: '/api/scim/*', tier: 'public' },
]);

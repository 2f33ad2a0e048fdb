import { GRANT_TYPES } from '../applications/index.ts';
import type { RouteRule } from '../../platform/http/rate-limit/tiers.ts';

/**
 * The OAuth routes' tiers, listed ahead of the auth module's rules:
 * - Device-code polling is not counted in the token endpoint's auth tier (decisions.md): RFC 8628's
 *   interval and slow_down govern it (device-code-grant.ts), so a CLI polling at the interval is
 *   never refused for the rate of its polls.
 * - The device verification page's form signs the user in with a password, as the authorization
 *   endpoint's form (/api/oauth/authenticate) does: the auth tier, like every password sign-in.
 */
export const oauthRateLimitRules: readonly RouteRule[] = [
  { path: '/api/auth/token', method: 'POST', body: { grant_type: GRANT_TYPES.deviceCode }, tier: null },
  { path: '/api/oauth/device', method: 'POST', tier: 'auth' },
];

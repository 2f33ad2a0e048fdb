import { GRANT_TYPES } from '../applications/index.ts';
import type { RouteRule } from '../../platform/http/rate-limit/tiers.ts';

/**
 * Device-code polling is not counted in the token endpoint's auth tier (decisions.md): RFC 8628's
 * interval and slow_down govern it (device-code-grant.ts), so a CLI polling at the interval is
 * never refused for the rate of its polls. Listed ahead of the auth module's token rule.
 */
export const oauthRateLimitRules: readonly RouteRule[] = [{ path: '/api/auth/token', method: 'POST', body: { grant_type: GRANT_TYPES.deviceCode }, tier: null }];

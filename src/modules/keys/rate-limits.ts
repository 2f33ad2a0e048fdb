import type { RouteRule } from '../../platform/http/rate-limit/tiers.ts';

/** Discovery and the JWKS: the spec's Public tier, per address. */
export const keysRateLimitRules: readonly RouteRule[] = [
  { path: '/.well-known/*', tier: 'public' },
  { path: '/api/.well-known/*', tier: 'public' },
];

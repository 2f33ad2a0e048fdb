/** The spec's four tiers (Limits, rate limiting). */
export type TierName = 'auth' | 'sensitive' | 'api' | 'public';

/**
 * Whom a tier counts: `ip` the client address; `user` the verified access token's tenant and
 * subject, falling back to the address without one.
 */
export type KeyKind = 'ip' | 'user';

export interface Tier {
  name: TierName;
  max: number;
  windowMs: number;
  keys: KeyKind[];
}

export type Tiers = Record<TierName, Tier>;

export interface RouteRule {
  /** An exact path, or a prefix ending in `/*`. Route patterns (`/api/users/:id`) match too. */
  path: string;
  /** Only this method; any method when absent. */
  method?: string;
  /** null: not limited. */
  tier: TierName | null;
  /** Also count per account: the tenant and the lower-cased `email` of the body. */
  perAccount?: true;
}

/**
 * The one route-to-tier table. Matched on path and method, not on route registration, so routes
 * added later fall into the right tier by their path; the first matching rule wins.
 */
export const ROUTE_RULES: readonly RouteRule[] = [
  { path: '/health/*', tier: null },
  { path: '/metrics', tier: null },
  { path: '/api/docs', tier: null },
  { path: '/api/docs/*', tier: null },
  { path: '/api/openapi.json', tier: null },
  { path: '/api/asyncapi.json', tier: null },

  { path: '/api/auth/login', method: 'POST', tier: 'auth', perAccount: true },
  { path: '/api/auth/signup', method: 'POST', tier: 'auth' },
  { path: '/api/auth/token', method: 'POST', tier: 'auth' },
  // Sends a sign-in link to an address: per account too, so nobody floods one mailbox from many addresses.
  { path: '/api/auth/magic-link', method: 'POST', tier: 'auth', perAccount: true },
  { path: '/api/auth/magic-link', tier: 'auth' },
  { path: '/api/auth/magic-link/*', tier: 'auth' },
  { path: '/api/auth/passwordless/*', tier: 'auth' },
  { path: '/api/oauth/authenticate', tier: 'auth' },
  // The pages e-mailed links open: their POSTs do what the API routes above do.
  { path: '/magic-link', method: 'POST', tier: 'auth' },
  { path: '/reset-password', method: 'POST', tier: 'sensitive' },

  { path: '/api/user/2fa/*', tier: 'sensitive' },
  // Unauthenticated, so "per user" is per account named in the body.
  { path: '/api/auth/forgot-password', tier: 'sensitive', perAccount: true },
  { path: '/api/auth/reset-password', tier: 'sensitive' },
  { path: '/api/auth/change-password', tier: 'sensitive' },
  { path: '/api/user/phone/*', tier: 'sensitive' },

  { path: '/.well-known/*', tier: 'public' },
  { path: '/api/.well-known/*', tier: 'public' },
  { path: '/api/scim/*', tier: 'public' },
  { path: '/api/*', tier: 'api' },
  // Pages outside the API (none yet): public, per address.
  { path: '/*', tier: 'public' },
];

const matches = (rule: RouteRule, method: string, path: string): boolean =>
  (!rule.method || rule.method === method) &&
  (rule.path.endsWith('/*') ? path.startsWith(rule.path.slice(0, -1)) : path === rule.path);

/** The rule of a request; `path` without query string. */
export function ruleFor(method: string, path: string): RouteRule | undefined {
  const normalized = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return ROUTE_RULES.find((rule) => matches(rule, method, normalized));
}

/** How many requests each tier admits per window. */
export type TierLimits = Record<TierName, { max: number; windowSeconds: number }>;

/** Whom each tier counts is fixed by the spec; how much it admits is the operator's choice. */
const TIER_KEYS: Record<TierName, KeyKind[]> = { auth: ['ip'], sensitive: ['ip', 'user'], api: ['user'], public: ['ip'] };

export function buildTiers(limits: TierLimits): Tiers {
  const tier = (name: TierName): Tier => ({ name, max: limits[name].max, windowMs: limits[name].windowSeconds * 1000, keys: TIER_KEYS[name] });
  return { auth: tier('auth'), sensitive: tier('sensitive'), api: tier('api'), public: tier('public') };
}

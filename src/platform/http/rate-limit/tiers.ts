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
  /**
   * Only requests whose parsed body (form or JSON) holds these values. A request such a rule may
   * match is counted once its body is parsed, still before validation and the route's work.
   */
  body?: Record<string, string>;
}

/** The platform's own routes: never limited (probes, metrics, the API documents). */
export const INFRASTRUCTURE_RULES: readonly RouteRule[] = [
  { path: '/health/*', tier: null },
  { path: '/metrics', tier: null },
  { path: '/api/docs', tier: null },
  { path: '/api/docs/*', tier: null },
  { path: '/api/openapi.json', tier: null },
  { path: '/api/asyncapi.json', tier: null },
];

/** What no module claims: every other API route per user, any page per address. */
export const FALLBACK_RULES: readonly RouteRule[] = [
  { path: '/api/*', tier: 'api' },
  { path: '/*', tier: 'public' },
];

/**
 * The route-to-tier table: the platform's rules, then each module's (src/rate-limit-rules.ts),
 * then the fallbacks. Matched on path and method, not on route registration, so routes added later
 * fall into the right tier by their path; the first matching rule wins.
 */
export const routeRules = (moduleRules: readonly RouteRule[]): readonly RouteRule[] => [...INFRASTRUCTURE_RULES, ...moduleRules, ...FALLBACK_RULES];

const matches = (rule: RouteRule, method: string, path: string): boolean =>
  (!rule.method || rule.method === method) &&
  (rule.path.endsWith('/*') ? path.startsWith(rule.path.slice(0, -1)) : path === rule.path);

const normalizedPath = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

const bodyHolds = (wanted: Record<string, string>, body: unknown): boolean =>
  typeof body === 'object' && body !== null && Object.entries(wanted).every(([field, value]) => (body as Record<string, unknown>)[field] === value);

/**
 * The rule of a request in `rules`; `path` without query string. `body` is the parsed body: without
 * it (before parsing, or for the API document) rules naming body values do not match.
 */
export function ruleFor(rules: readonly RouteRule[], method: string, path: string, body?: unknown): RouteRule | undefined {
  const normalized = normalizedPath(path);
  return rules.find((rule) => matches(rule, method, normalized) && (!rule.body || bodyHolds(rule.body, body)));
}

/** Whether a rule naming body values may apply to the request: its tier is then known only once the body is parsed. */
export const dependsOnBody = (rules: readonly RouteRule[], method: string, path: string): boolean =>
  rules.some((rule) => rule.body !== undefined && matches(rule, method, normalizedPath(path)));

/** How many requests each tier admits per window. */
export type TierLimits = Record<TierName, { max: number; windowSeconds: number }>;

/** Whom each tier counts is fixed by the spec; how much it admits is the operator's choice. */
const TIER_KEYS: Record<TierName, KeyKind[]> = { auth: ['ip'], sensitive: ['ip', 'user'], api: ['user'], public: ['ip'] };

export function buildTiers(limits: TierLimits): Tiers {
  const tier = (name: TierName): Tier => ({ name, max: limits[name].max, windowMs: limits[name].windowSeconds * 1000, keys: TIER_KEYS[name] });
  return { auth: tier('auth'), sensitive: tier('sensitive'), api: tier('api'), public: tier('public') };
}

import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { platformError } from '../../errors.ts';
import type { HttpServer } from '../server.ts';
import type { IdentifyCaller } from './caller.ts';
import { clientAddressKey } from './client-address.ts';
import { judge, type RateLimitVerdict } from './sliding-window.ts';
import type { RateLimitStore } from './store.ts';
import { dependsOnBody, ruleFor, type KeyKind, type RouteRule, type Tier, type Tiers } from './tiers.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The strictest verdict of the keys counted so far (null on routes without a limit). */
    rateLimit: RateLimitVerdict | null;
  }
}

export interface RateLimitOptions {
  /** The route-to-tier table (tiers.ts routeRules). */
  rules: readonly RouteRule[];
  store: RateLimitStore;
  tiers: Tiers;
  identifyCaller: IdentifyCaller;
}


/** Of several keys the one with the fewest requests left is reported; any exhausted key rejects. */
function strictest(verdicts: RateLimitVerdict[]): RateLimitVerdict {
  const reported = verdicts.reduce((a, b) => (b.remaining < a.remaining || (b.remaining === a.remaining && b.resetAt > a.resetAt) ? b : a));
  return { ...reported, allowed: verdicts.every((v) => v.allowed), retryAfterMs: Math.max(...verdicts.map((v) => v.retryAfterMs)) };
}

const rateLimitHeaders = (verdict: RateLimitVerdict) => ({
  'x-ratelimit-limit': String(verdict.limit),
  'x-ratelimit-remaining': String(verdict.remaining),
  'x-ratelimit-reset': String(Math.ceil(verdict.resetAt / 1000)),
});

/** The account a login names: tenant and lower-cased e-mail, hashed so no store keeps addresses. */
function accountKey(request: FastifyRequest): string | null {
  const email = (request.body as { email?: unknown } | undefined)?.email;
  const tenant = request.tenant?.name;
  if (typeof email !== 'string' || !tenant) return null;
  return `account:${createHash('sha256').update(`${tenant}\n${email.trim().toLowerCase()}`).digest('base64url')}`;
}

/**
 * The spec's rate limits (tiers.ts): every response of a limited route carries X-RateLimit-Limit,
 * -Remaining and -Reset, errors included; an exhausted key answers 429 RATE_LIMITED with
 * Retry-After through the one error handler, so each route keeps its error envelope.
 * Register before tenant resolution: a flood is turned away before it costs a query.
 */
export function registerRateLimit(app: HttpServer, options: RateLimitOptions): void {
  const { store, tiers, identifyCaller } = options;
  const pathOf = (request: FastifyRequest) => request.routeOptions.url ?? request.url.split('?')[0]!;
  const ruleOf = (request: FastifyRequest, body?: unknown) => ruleFor(options.rules, request.method, pathOf(request), body);
  app.decorateRequest('rateLimit', null);
  app.addHook('onClose', () => store.close());

  async function keyOf(request: FastifyRequest, kind: KeyKind): Promise<string> {
    const caller = kind === 'user' ? await identifyCaller(request) : null;
    return caller ? `user:${caller}` : `ip:${clientAddressKey(request.ip)}`;
  }

  async function count(request: FastifyRequest, reply: FastifyReply, tier: Tier, keys: string[]): Promise<void> {
    const verdicts = await Promise.all(
      keys.map(async (key) => {
        const { counts, now } = await store.hit(`${tier.name}:${key}`, tier.windowMs);
        return judge(counts, now, tier.max, tier.windowMs);
      }),
    );
    const verdict = strictest(request.rateLimit ? [request.rateLimit, ...verdicts] : verdicts);
    request.rateLimit = verdict;
    void reply.headers(rateLimitHeaders(verdict));
    if (!verdict.allowed) {
      throw platformError('RATE_LIMITED', 'Too many requests; retry later', undefined, Math.max(1, Math.ceil(verdict.retryAfterMs / 1000)));
    }
  }

  async function countInTier(request: FastifyRequest, reply: FastifyReply, tier: Tier): Promise<void> {
    const keys = await Promise.all(tier.keys.map((kind) => keyOf(request, kind)));
    await count(request, reply, tier, [...new Set(keys)]);
  }

  // First thing: before the tenant lookup, authentication and body parsing (unless the tier depends on the body).
  app.addHook('onRequest', async (request, reply) => {
    if (dependsOnBody(options.rules, request.method, pathOf(request))) return;
    const tier = ruleOf(request)?.tier;
    if (tier) await countInTier(request, reply, tiers[tier]);
  });

  // The body is parsed only now: the tiers that depend on it, and the account it names; still before
  // validation and the route's work, so a rejected login costs no password hash.
  app.addHook('preValidation', async (request, reply) => {
    const rule = ruleOf(request, request.body);
    if (!rule?.tier) return;
    if (dependsOnBody(options.rules, request.method, pathOf(request))) await countInTier(request, reply, tiers[rule.tier]);
    const account = rule.perAccount ? accountKey(request) : null;
    if (account) await count(request, reply, tiers[rule.tier], [account]);
  });
}

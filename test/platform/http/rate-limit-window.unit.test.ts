import { describe, expect, it } from 'vitest';
import { clientAddressKey } from '../../../src/platform/http/rate-limit/client-address.ts';
import { countHit, judge } from '../../../src/platform/http/rate-limit/sliding-window.ts';
import { rateLimitRules } from '../../../src/rate-limit-rules.ts';
import { dependsOnBody, ruleFor } from '../../../src/platform/http/rate-limit/tiers.ts';

const W = 60_000;
const T0 = Date.UTC(2026, 0, 1);

describe('sliding-window counter', () => {
  it('admits the limit, then rejects, reporting what is left', () => {
    const first = judge({ windowStart: T0, current: 1, previous: 0 }, T0, 3, W);
    expect(first).toEqual({ allowed: true, limit: 3, remaining: 2, resetAt: T0 + 2 * W, retryAfterMs: 0 });
    expect(judge({ windowStart: T0, current: 3, previous: 0 }, T0, 3, W)).toMatchObject({ allowed: true, remaining: 0 });
    expect(judge({ windowStart: T0, current: 4, previous: 0 }, T0, 3, W)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it("weighs the previous window by the share of it still inside the sliding window", () => {
    // 10 previous hits, a quarter into the window: 10 * 0.75 + 2 = 9.5 of 10.
    expect(judge({ windowStart: T0, current: 2, previous: 10 }, T0 + W / 4, 10, W)).toMatchObject({ allowed: true, remaining: 0 });
    // Half-way: 10 * 0.5 + 2 = 7.
    expect(judge({ windowStart: T0, current: 2, previous: 10 }, T0 + W / 2, 10, W)).toMatchObject({ remaining: 3 });
  });

  it('says when the next request fits: within this window while the previous one decays', () => {
    // 10 * (1 - f) + 2 <= 9  =>  f >= 0.3: 18 s into the window, 3 s after now.
    const verdict = judge({ windowStart: T0, current: 2, previous: 10 }, T0 + 15_000, 10, W);
    expect(verdict.retryAfterMs).toBe(3_000);
    expect(judge({ windowStart: T0, current: 3, previous: 10 }, T0 + 18_000, 10, W).allowed).toBe(true);
  });

  it("says when the next request fits: in the next window when this window's hits alone exceed it", () => {
    // 12 hits, limit 10: 12 * (1 - f) <= 9  =>  f >= 0.25 into the next window.
    const verdict = judge({ windowStart: T0, current: 12, previous: 0 }, T0 + 30_000, 10, W);
    expect(verdict).toMatchObject({ allowed: false, retryAfterMs: 45_000 });
  });

  it('moves the counts along as windows pass', () => {
    const first = countHit(undefined, T0 + 1, W);
    expect(first).toEqual({ windowStart: T0, current: 1, previous: 0 });
    expect(countHit(first, T0 + 2, W)).toEqual({ windowStart: T0, current: 2, previous: 0 });
    expect(countHit({ ...first, current: 7 }, T0 + W, W)).toEqual({ windowStart: T0 + W, current: 1, previous: 7 });
    expect(countHit({ ...first, current: 7 }, T0 + 2 * W, W)).toEqual({ windowStart: T0 + 2 * W, current: 1, previous: 0 });
    // Another instance's clock ahead: its window takes the hit instead of being reset.
    expect(countHit({ windowStart: T0 + W, current: 3, previous: 1 }, T0 + W - 5, W)).toEqual({ windowStart: T0 + W, current: 4, previous: 1 });
  });
});

describe('route tiers', () => {
  it.each([
    ['POST', '/api/auth/login', 'auth', true],
    ['POST', '/api/auth/token', 'auth', false],
    ['POST', '/api/auth/magic-link', 'auth', true],
    ['GET', '/api/auth/magic-link/verify', 'auth', false],
    ['POST', '/api/auth/passwordless/start', 'auth', false],
    ['POST', '/api/oauth/authenticate', 'auth', false],
    // The device verification page's form signs in with a password; its JSON twin takes a bearer token.
    ['POST', '/api/oauth/device', 'auth', false],
    ['POST', '/api/oauth/device/verify', 'api', false],
    ['POST', '/api/user/2fa/enable', 'sensitive', false],
    ['POST', '/api/auth/forgot-password', 'sensitive', true],
    ['POST', '/api/auth/change-password/', 'sensitive', false],
    ['POST', '/api/user/phone/set', 'sensitive', false],
    ['GET', '/.well-known/jwks.json', 'public', false],
    ['GET', '/api/.well-known/openid-configuration', 'public', false],
    ['GET', '/api/scim/v2/Users', 'public', false],
    ['GET', '/api/users/:id', 'api', false],
    ['GET', '/api/v1/users', 'api', false],
    ['GET', '/api/auth/login', 'api', false],
    ['GET', '/health/ready', null, false],
    ['GET', '/metrics', null, false],
    ['GET', '/api/docs/static/index.html', null, false],
    ['GET', '/api/openapi.json', null, false],
    ['GET', '/api/asyncapi.json', null, false],
  ])('%s %s -> %s (per account: %s)', (method, path, tier, perAccount) => {
    const rule = ruleFor(rateLimitRules, method, path);
    expect([rule?.tier, rule?.perAccount ?? false]).toEqual([tier, perAccount]);
  });

  it('token requests are in the auth tier, device-code polls in none (decided by the parsed body)', () => {
    const poll = { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'x' };
    expect(dependsOnBody(rateLimitRules, 'POST', '/api/auth/token')).toBe(true);
    expect(dependsOnBody(rateLimitRules, 'POST', '/api/auth/login')).toBe(false);
    expect(ruleFor(rateLimitRules, 'POST', '/api/auth/token', poll)?.tier).toBeNull();
    expect(ruleFor(rateLimitRules, 'POST', '/api/auth/token', { grant_type: 'client_credentials' })?.tier).toBe('auth');
    expect(ruleFor(rateLimitRules, 'POST', '/api/auth/token', 'grant_type=urn:ietf:params:oauth:grant-type:device_code')?.tier).toBe('auth');
    // Without the body (before parsing, or for the API document) the path's tier.
    expect(ruleFor(rateLimitRules, 'POST', '/api/auth/token')?.tier).toBe('auth');
  });
});

describe('client address keys', () => {
  it('counts IPv4 per address and IPv6 per /64 network', () => {
    expect(clientAddressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('2001:db8:0:12:aaaa::1')).toBe('2001:db8:0:12::/64');
    expect(clientAddressKey('2001:0db8:0000:0012:ffff:ffff:ffff:ffff')).toBe('2001:db8:0:12::/64');
    expect(clientAddressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
  });
});

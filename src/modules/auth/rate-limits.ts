import type { RouteRule } from '../../platform/http/rate-limit/tiers.ts';

/**
 * The spec's Auth and Sensitive tiers for signing in and managing credentials. The two-factor,
 * phone, passwordless and OAuth sign-in paths are listed ahead of their modules so that they are
 * limited from their first route.
 */
export const authRateLimitRules: readonly RouteRule[] = [
  { path: '/api/auth/login', method: 'POST', tier: 'auth', perAccount: true },
  { path: '/api/auth/signup', method: 'POST', tier: 'auth' },
  { path: '/api/auth/token', method: 'POST', tier: 'auth' },
  // Sends a sign-in link to an address: per account too, so nobody floods one mailbox from many addresses.
  { path: '/api/auth/magic-link', method: 'POST', tier: 'auth', perAccount: true },
  { path: '/api/auth/magic-link', tier: 'auth' },
  { path: '/api/auth/magic-link/*', tier: 'auth' },
  { path: '/api/auth/passwordless/*', tier: 'auth' },
  // A code guessed at: the lockout counts wrong codes per account, this per address.
  { path: '/api/auth/mfa/*', tier: 'auth' },
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
];

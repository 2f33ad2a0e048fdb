import { z } from 'zod';
import { DEFAULT_SECURITY_SETTINGS } from './defaults.ts';

/** The spec's bounds per field (Limits, Security settings bounds), section by section (decisions.md). */
const seconds = (min: number, max: number) => z.number().int().min(min).max(max);

export const USER_CLAIM_SOURCES = ['email', 'username', 'firstName', 'lastName', 'emailVerified'] as const;

export const sectionSchemas = {
  tokens: z.strictObject({
    accessTokenExpiry: seconds(60, 86_400),
    refreshTokenExpiry: seconds(3600, 2_592_000),
    sessionMaxLifetime: seconds(60, 31_536_000),
    sessionIdleTimeout: seconds(60, 31_536_000),
  }),
  login: z.strictObject({
    maxConcurrentSessions: z.number().int().min(0).max(100),
    requireMfaForAdmin: z.boolean(),
  }),
  bruteForce: z.strictObject({
    lockoutThreshold: z.number().int().min(1).max(100),
    lockoutDuration: seconds(60, 86_400),
  }),
  security: z.strictObject({
    passwordMinLength: z.number().int().min(6).max(128),
    passwordRequireUppercase: z.boolean(),
    passwordRequireLowercase: z.boolean(),
    passwordRequireNumbers: z.boolean(),
    passwordRequireSpecial: z.boolean(),
    passwordHistoryCount: z.number().int().min(0).max(24),
  }),
  general: z.strictObject({
    displayName: z.string().trim().max(200).nullable(),
    supportEmail: z.email().max(254).nullable(),
    privacyPolicyUrl: z.url().max(2000).nullable(),
    termsOfServiceUrl: z.url().max(2000).nullable(),
    /** Self-service POST /api/auth/signup (open by default, as in Auth0 database connections). */
    allowSignup: z.boolean(),
  }),
  tokenClaims: z.strictObject({
    /** Extra access-token claims copied from user fields, e.g. {claim: "email", from: "email"}. */
    claims: z
      .array(z.strictObject({ claim: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/i), from: z.enum(USER_CLAIM_SOURCES) }))
      .max(20),
  }),
};

export type SectionName = keyof typeof sectionSchemas;
export const SECTION_NAMES = Object.keys(sectionSchemas) as SectionName[];

export type NestedSettings = { [S in SectionName]: z.infer<(typeof sectionSchemas)[S]> };

const pick = <K extends keyof typeof DEFAULT_SECURITY_SETTINGS>(...keys: K[]) =>
  Object.fromEntries(keys.map((k) => [k, DEFAULT_SECURITY_SETTINGS[k]])) as Pick<typeof DEFAULT_SECURITY_SETTINGS, K>;

export const DEFAULT_NESTED_SETTINGS: NestedSettings = {
  tokens: pick('accessTokenExpiry', 'refreshTokenExpiry', 'sessionMaxLifetime', 'sessionIdleTimeout'),
  login: pick('maxConcurrentSessions', 'requireMfaForAdmin'),
  bruteForce: pick('lockoutThreshold', 'lockoutDuration'),
  security: pick(
    'passwordMinLength',
    'passwordRequireUppercase',
    'passwordRequireLowercase',
    'passwordRequireNumbers',
    'passwordRequireSpecial',
    'passwordHistoryCount',
  ),
  general: { displayName: null, supportEmail: null, privacyPolicyUrl: null, termsOfServiceUrl: null, allowSignup: true },
  tokenClaims: { claims: [] },
};

/** Cross-field rules of the spec, checked on the merged settings; returns the offending field. */
export function crossFieldViolation(settings: NestedSettings): { path: string; message: string } | null {
  const { accessTokenExpiry, sessionMaxLifetime, sessionIdleTimeout } = settings.tokens;
  if (sessionMaxLifetime < accessTokenExpiry) {
    return { path: 'data.sessionMaxLifetime', message: 'sessionMaxLifetime must be at least accessTokenExpiry' };
  }
  if (sessionIdleTimeout > sessionMaxLifetime) {
    return { path: 'data.sessionIdleTimeout', message: 'sessionIdleTimeout must be at most sessionMaxLifetime' };
  }
  return null;
}

/** The flat view of GET /api/realm-settings: the spec's fields only. */
export function flatten(settings: NestedSettings) {
  return { ...settings.tokens, ...settings.login, ...settings.security, ...settings.bruteForce };
}

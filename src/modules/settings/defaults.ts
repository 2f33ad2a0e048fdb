/** The spec's security settings with their defaults (Resources, Security settings). */
export const DEFAULT_SECURITY_SETTINGS = {
  sessionMaxLifetime: 86_400,
  sessionIdleTimeout: 3600,
  refreshTokenExpiry: 604_800,
  accessTokenExpiry: 900,
  maxConcurrentSessions: 5,
  requireMfaForAdmin: true,
  passwordMinLength: 8,
  passwordRequireUppercase: true,
  passwordRequireLowercase: true,
  passwordRequireNumbers: true,
  passwordRequireSpecial: false,
  passwordHistoryCount: 5,
  lockoutThreshold: 5,
  lockoutDuration: 900,
};

export type SecuritySettings = typeof DEFAULT_SECURITY_SETTINGS;

import { PERMISSIONS } from '../roles/index.ts';
import { validationError, type ErrorDetail } from '../../platform/errors.ts';
import type { ApplicationSettings, ApplicationType } from './events.ts';

export const GRANT_TYPES = {
  authorizationCode: 'authorization_code',
  refreshToken: 'refresh_token',
  clientCredentials: 'client_credentials',
  deviceCode: 'urn:ietf:params:oauth:grant-type:device_code',
  tokenExchange: 'urn:ietf:params:oauth:grant-type:token-exchange',
} as const;
const G = GRANT_TYPES;
const KNOWN_GRANTS: readonly string[] = Object.values(GRANT_TYPES);

/** Public clients (no secret; PKCE required). */
export const isPublicType = (type: ApplicationType): boolean => type === 'spa' || type === 'native';

/** The grants each type may hold, and those it gets when none are named. */
export const GRANTS_BY_TYPE: Record<ApplicationType, { allowed: readonly string[]; defaults: string[] }> = {
  web: { allowed: [G.authorizationCode, G.refreshToken, G.deviceCode, G.tokenExchange], defaults: [G.authorizationCode, G.refreshToken] },
  spa: { allowed: [G.authorizationCode, G.refreshToken], defaults: [G.authorizationCode, G.refreshToken] },
  native: { allowed: [G.authorizationCode, G.refreshToken, G.deviceCode], defaults: [G.authorizationCode, G.refreshToken, G.deviceCode] },
  m2m: { allowed: [G.clientCredentials, G.tokenExchange], defaults: [G.clientCredentials] },
};

/** m2m scopes: permission names, and `scim` (decisions.md, Points left open). */
export const CLIENT_SCOPES: readonly string[] = [...PERMISSIONS, 'scim'];

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A redirect URI a client may register (RFC 9700 2.1, 4.1): absolute, no fragment, https, or
 * http on a loopback host, or a private-use scheme (reverse domain, RFC 8252 7.1) for native apps.
 */
export function redirectUriProblem(uri: string, type: ApplicationType): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (url.hash || uri.includes('#')) return 'must not hold a fragment';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') return LOOPBACK.has(url.hostname) ? null : 'http is allowed only on a loopback host';
  if (type === 'native' && /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) return null;
  return 'must be https (private-use schemes in reverse-domain form only for native applications)';
}

/** An origin as browsers send it: scheme, host and port only. */
export function originProblem(origin: string): string | null {
  try {
    const url = new URL(origin);
    if (url.origin !== origin) return 'must be an origin (scheme://host[:port]), nothing more';
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) return 'must be https (http only on a loopback host)';
    return null;
  } catch {
    return 'must be an origin (scheme://host[:port])';
  }
}

/** Refuses settings that do not fit the application's type (VALIDATION_ERROR with every problem). */
export function assertCoherent(type: ApplicationType, settings: ApplicationSettings): void {
  const problems: ErrorDetail[] = [];
  const { allowed } = GRANTS_BY_TYPE[type];
  settings.grantTypes.forEach((grant, i) => {
    // A short name (device_code for the URN) is unknown, not forbidden: say so, with the spellings that exist.
    if (!KNOWN_GRANTS.includes(grant)) problems.push({ path: `grantTypes.${i}`, message: `unknown grant type ${grant} (one of ${KNOWN_GRANTS.join(', ')})` });
    else if (!allowed.includes(grant)) problems.push({ path: `grantTypes.${i}`, message: `a ${type} application cannot use ${grant}` });
  });
  const check = (field: 'redirectUris' | 'postLogoutRedirectUris') =>
    settings[field].forEach((uri, i) => {
      const problem = redirectUriProblem(uri, type);
      if (problem) problems.push({ path: `${field}.${i}`, message: problem });
    });
  check('redirectUris');
  check('postLogoutRedirectUris');
  settings.allowedOrigins.forEach((origin, i) => {
    const problem = originProblem(origin);
    if (problem) problems.push({ path: `allowedOrigins.${i}`, message: problem });
  });
  settings.scopes.forEach((scope, i) => {
    if (!CLIENT_SCOPES.includes(scope)) problems.push({ path: `scopes.${i}`, message: `unknown scope ${scope}` });
  });
  if (settings.scopes.length > 0 && type !== 'm2m') problems.push({ path: 'scopes', message: 'only m2m applications hold scopes' });
  if (problems.length) throw validationError(problems.map((p) => `${p.path}: ${p.message}`).join('; '), problems);
}

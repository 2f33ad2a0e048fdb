import { GRANT_TYPES, isPublicType, type Application } from '../applications/index.ts';
import { PERMISSIONS } from '../roles/index.ts';
import { OIDC_SCOPES, scopeList } from './scopes.ts';

/** What a validated authorization request asks, carried (sealed) by the sign-in form as request_id. */
export interface AuthorizationRequest {
  tenant: string;
  clientId: string;
  redirectUri: string;
  scope: string[];
  state: string;
  nonce: string | null;
  codeChallenge: string | null;
  /** Epoch ms after which the form is refused. */
  expiresAt: number;
}

/** The sign-in form is good for 10 minutes. */
export const REQUEST_LIFETIME_MS = 10 * 60_000;

export const AUTHORIZE_SCOPES: readonly string[] = [...OIDC_SCOPES, ...PERMISSIONS];
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export type AuthorizeOutcome =
  /** Client or redirect_uri not trusted: a page, never a redirect (RFC 6749 4.1.2.1). */
  | { kind: 'page'; message: string }
  | { kind: 'redirect-error'; redirectUri: string; state: string | null; error: string; description: string }
  | { kind: 'sign-in'; request: AuthorizationRequest };

type Query = Record<string, string | string[] | undefined>;

/** A loopback IP redirect URI (RFC 8252 7.3) split around its port: `http://127.0.0.1` or `http://[::1]`, and what follows the port. */
const LOOPBACK_IP_URI = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]))(?::(\d{1,5}))?([/?].*)?$/;
const withoutPort = (uri: string): string | null => {
  const match = LOOPBACK_IP_URI.exec(uri);
  return match && Number(match[2] ?? 0) <= 65_535 ? `${match[1]}${match[3] ?? ''}` : null;
};

/**
 * Whether `uri` is one of the client's registered redirect URIs, character for character (no
 * trailing-slash, case or query leniency: RFC 9700 4.1.3). The one exception RFC 9700 2.1 makes:
 * a native app's loopback IP redirect URI matches with any port (RFC 8252 7.3: the app binds a
 * port the system picks at the time of the request); everything but the port is still exact.
 */
export function redirectUriRegistered(application: Pick<Application, 'type' | 'redirectUris'>, uri: string): boolean {
  if (application.redirectUris.includes(uri)) return true;
  const asked = application.type === 'native' ? withoutPort(uri) : null;
  return asked !== null && application.redirectUris.some((registered) => withoutPort(registered) === asked);
}

/**
 * Checks an authorization request (RFC 6749 4.1.1, RFC 7636, OIDC Core 3.1.2.1) against the
 * client's registration. redirect_uri must be registered (redirectUriRegistered). state is
 * required; PKCE with S256 is required of public clients and, when sent, S256 only (plain is
 * refused).
 */
export function checkAuthorizationRequest(query: Query, application: Application | null, tenant: string, now: number): AuthorizeOutcome {
  // RFC 6749 3.1: no parameter twice.
  const repeated = Object.entries(query).find(([, value]) => Array.isArray(value));
  const one = (name: string) => (typeof query[name] === 'string' && query[name] !== '' ? (query[name] as string) : null);
  if (!application) return { kind: 'page', message: 'This application is not known. Return to the application and try again.' };
  const redirectUri = one('redirect_uri');
  if (!redirectUri || !redirectUriRegistered(application, redirectUri) || repeated?.[0] === 'redirect_uri') {
    return { kind: 'page', message: 'The address this application asked to return to is not registered for it.' };
  }
  const state = one('state');
  const fail = (error: string, description: string): AuthorizeOutcome => ({ kind: 'redirect-error', redirectUri, state, error, description });
  if (repeated) return fail('invalid_request', `The ${repeated[0]} parameter is repeated`);
  if (one('response_type') !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');
  if (!application.grantTypes.includes(GRANT_TYPES.authorizationCode)) return fail('unauthorized_client', 'This client may not use the authorization code grant');
  if (!state) return fail('invalid_request', 'The state parameter is required');
  const responseMode = one('response_mode');
  if (responseMode && responseMode !== 'query') return fail('invalid_request', 'Only response_mode=query is supported');
  if (one('request') || one('request_uri')) return fail('invalid_request', 'Request objects are not supported');
  if (scopeList(one('prompt') ?? '').includes('none')) return fail('login_required', 'The user must sign in');
  const scope = scopeList(one('scope') ?? 'openid');
  const unknown = scope.filter((name) => !AUTHORIZE_SCOPES.includes(name));
  if (unknown.length) return fail('invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
  const challenge = one('code_challenge');
  const method = one('code_challenge_method');
  if (challenge === null) {
    if (isPublicType(application.type)) return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256');
    if (method !== null) return fail('invalid_request', 'code_challenge_method without code_challenge');
  } else if (method !== 'S256') {
    return fail('invalid_request', 'code_challenge_method must be S256 (plain is refused)');
  } else if (!S256_CHALLENGE.test(challenge)) {
    return fail('invalid_request', 'code_challenge is not an S256 challenge');
  }
  const nonce = one('nonce');
  if ((nonce?.length ?? 0) > 512 || state.length > 2048) return fail('invalid_request', 'state or nonce is too long');
  return {
    kind: 'sign-in',
    request: { tenant, clientId: application.clientId, redirectUri, scope, state, nonce, codeChallenge: challenge, expiresAt: now + REQUEST_LIFETIME_MS },
  };
}

/** redirect_uri with the answer's parameters added to its query (RFC 6749 4.1.2), and `iss` (RFC 9207). */
export function redirectWith(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  return url.toString();
}

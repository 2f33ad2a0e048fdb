import { z } from 'zod';

/**
 * A front-channel endpoint's query parameters, each declared by name so that the OpenAPI document
 * lists them (a free-form record documents nothing a client or a fuzzer can use). A parameter given
 * twice arrives as an array, which the endpoint refuses (RFC 6749 3.1); others are ignored (OIDC
 * Core 3.1.2.1).
 */
export function queryParameters<const Name extends string>(names: readonly Name[], maxLength: number) {
  const value = z.union([z.string().max(maxLength), z.array(z.string().max(maxLength)).max(5)]).optional();
  return z.object(Object.fromEntries(names.map((name) => [name, value])) as Record<Name, typeof value>);
}

/** The authorization endpoint's parameters (RFC 6749 4.1.1, RFC 7636, OIDC Core 3.1.2.1). */
export const AUTHORIZE_PARAMETERS = [
  'response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method',
  'prompt', 'response_mode', 'request', 'request_uri', 'max_age', 'login_hint', 'ui_locales', 'display', 'acr_values', 'id_token_hint', 'claims',
] as const;

/** The end-session endpoint's parameters (OIDC RP-Initiated Logout 1.0, section 2). */
export const LOGOUT_PARAMETERS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'logout_hint', 'ui_locales'] as const;

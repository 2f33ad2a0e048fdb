import { CLIENT_SCOPES } from '../applications/index.ts';
import { AUTHORIZE_SCOPES } from './authorization-request.ts';

/**
 * What the provider supports, for /.well-known/openid-configuration: exactly what works (the
 * grant types are the token endpoint's registry), so a standard client configured from discovery
 * alone never picks something the service refuses.
 */
export function providerMetadata(grantTypes: string[], endpoints: Record<string, string>) {
  return {
    ...endpoints,
    grant_types_supported: grantTypes,
    // What the authorization endpoint grants (OIDC scopes, permission names), then what only clients get (scim).
    scopes_supported: [...new Set([...AUTHORIZE_SCOPES, ...CLIENT_SCOPES])],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    // RFC 9207: the authorization response carries iss (mix-up defence).
    authorization_response_iss_parameter_supported: true,
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'acr', 'amr', 'sid', 'azp', 'at_hash', 'name', 'given_name', 'family_name', 'preferred_username', 'email', 'email_verified', 'tenant', 'roles'],
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}

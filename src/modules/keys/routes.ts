import { principalOf, requirePlatformAdmin } from '../../platform/http/authentication.ts';
import { ok } from '../../platform/http/envelopes.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import type { KeyRing } from './key-ring.ts';

const JWKS_CACHE = 'public, max-age=3600';

/** OIDC discovery, the JWKS, and key rotation for platform administrators. */
export function registerKeyRoutes(app: HttpServer, deps: { keyRing: KeyRing; issuer: string; platformTenant: string | undefined }): void {
  const discovery = () => ({
    issuer: deps.issuer,
    authorization_endpoint: `${deps.issuer}/api/oauth/authorize`,
    token_endpoint: `${deps.issuer}/api/auth/token`,
    userinfo_endpoint: `${deps.issuer}/api/auth/validate`,
    jwks_uri: `${deps.issuer}/.well-known/jwks.json`,
    response_types_supported: ['code'],
    grant_types_supported: [
      'authorization_code',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
      'refresh_token',
    ],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256', 'HS256'],
    scopes_supported: ['openid', 'profile', 'email'],
  });
  for (const prefix of ['', '/api']) {
    app.get(`${prefix}/.well-known/openid-configuration`, { schema: { tags: ['Discovery'], summary: 'OpenID Connect discovery' }, config: { tenant: 'none' } }, async () =>
      discovery(),
    );
    app.get(`${prefix}/.well-known/jwks.json`, { schema: { tags: ['Discovery'], summary: 'Public signing keys' }, config: { tenant: 'none' } }, async (_request, reply) => {
      void reply.header('cache-control', JWKS_CACHE);
      return deps.keyRing.jwks();
    });
  }

  app.post(
    '/api/admin/signing-keys/rotate',
    {
      schema: { tags: ['Keys'], summary: 'Add a new signing key; old keys stay published until their tokens expire', security: [{ bearer: [] }] },
      onRequest: [requirePlatformAdmin(deps.platformTenant)],
    },
    async (request) => ok({ kid: await deps.keyRing.rotate(principalOf(request).subject) }),
  );
}

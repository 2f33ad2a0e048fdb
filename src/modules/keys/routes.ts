import { z } from 'zod';
import { principalOf } from '../../platform/http/authentication.ts';
import { ok, okBody } from '../../platform/http/envelopes.ts';
import { platformAdmin, publicAccess, route } from '../../platform/http/route.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { KEY_RECHECK_MS, type KeyRing } from './key-ring.ts';

const JWKS_CACHE = 'public, max-age=3600';

/** RFC 8414 / OIDC Discovery members beyond the spec's list (the OAuth module supplies them) pass through. */
const discoverySchema = z.looseObject({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  userinfo_endpoint: z.string(),
  jwks_uri: z.string(),
  response_types_supported: z.array(z.string()),
  grant_types_supported: z.array(z.string()),
  subject_types_supported: z.array(z.string()),
  id_token_signing_alg_values_supported: z.array(z.string()),
  scopes_supported: z.array(z.string()),
});
/** RFC 7517 public keys (RSA: n and e; EC: crv, x and y); other members of a JWK pass through. */
const jwksSchema = z.object({
  keys: z.array(z.looseObject({ kty: z.string(), kid: z.string(), alg: z.string(), use: z.literal('sig') })),
});

/** OIDC discovery, the JWKS, and key rotation for platform administrators. */
export function registerKeyRoutes(
  app: HttpServer,
  deps: {
    keyRing: KeyRing;
    issuer: string;
    platformTenant: string | undefined;
    /** What the OAuth provider supports (its endpoints, grants, methods), replacing the defaults below. */
    providerMetadata?: Record<string, unknown>;
  },
): void {
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
    ...deps.providerMetadata,
  });
  const discoveryRoute = { tags: ['Discovery'], access: publicAccess, tenant: 'none' as const, method: 'GET' as const };
  for (const prefix of ['', '/api']) {
    route(app, {
      ...discoveryRoute,
      url: `${prefix}/.well-known/openid-configuration`,
      summary: 'OpenID Connect discovery',
      responses: { 200: discoverySchema },
      handler: async () => discovery(),
    });
    route(app, {
      ...discoveryRoute,
      url: `${prefix}/.well-known/jwks.json`,
      summary: 'Public signing keys',
      responses: { 200: jwksSchema },
      handler: async (_request, reply) => {
        void reply.header('cache-control', JWKS_CACHE);
        await deps.keyRing.reloadIfOlderThan(KEY_RECHECK_MS);
        return deps.keyRing.jwks() as z.input<typeof jwksSchema>;
      },
    });
  }

  route(app, {
    tags: ['Keys'],
    access: platformAdmin(deps.platformTenant),
    method: 'POST',
    url: '/api/admin/signing-keys/rotate',
    summary: 'Add a new signing key; old keys stay published until their tokens expire',
    responses: { 200: okBody(z.object({ kid: z.string() })) },
    handler: async (request) => ok({ kid: await deps.keyRing.rotate(principalOf(request).subject) }),
  });
}

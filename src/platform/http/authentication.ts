import type { FastifyRequest } from 'fastify';
import { platformError } from '../errors.ts';
import { adoptTenant, tenantOf } from './tenant-resolution.ts';

/** The authenticated caller of a request, resolved in the request's tenant. */
export interface Principal {
  subject: string; // user id or client id
  tenant: string;
  sessionId: string | null;
  roles: string[];
  permissions: ReadonlySet<string>;
  claims: Record<string, unknown>;
}

/**
 * Verifies a bearer token for a tenant and resolves its roles to permissions; may answer without a
 * promise (a token verified before, roles in memory), and may throw instead of rejecting.
 */
export interface Authenticator {
  authenticate(token: string, tenant: string): Principal | Promise<Principal>;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    authenticator: Authenticator;
  }
}

/** The usual header (a JWT's characters are printable ASCII): one scan, no capture. */
const PLAIN_BEARER = /^Bearer [\x21-\x7e]+$/;

export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (header && PLAIN_BEARER.test(header)) return header.slice('Bearer '.length);
  // Any other spelling: what this matches is the same token, or a refusal.
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match?.[1]) throw platformError('TOKEN_INVALID', 'A bearer access token is required');
  return match[1];
}

const tokenInvalid = () => platformError('TOKEN_INVALID', 'The access token is invalid');

/**
 * The unverified `tid` of a JWT, or null: only a hint of where to verify it. Decoded with node's
 * base64url (half the CPU of jose's decodeJwt, on every userinfo request without x-tenant); any payload that is not a JSON
 * object with a string `tid` gives no hint, and the token is verified in full either way.
 */
function tenantClaimOf(token: string): string | null {
  const start = token.indexOf('.') + 1;
  const end = token.indexOf('.', start);
  if (start === 0 || end < 0) return null;
  try {
    const tid = (JSON.parse(Buffer.from(token.slice(start, end), 'base64url').toString()) as { tid?: unknown } | null)?.tid;
    return typeof tid === 'string' ? tid : null;
  } catch {
    return null;
  }
}

/**
 * Route hook: any valid access token of the x-tenant tenant. On a `tenant: 'credential'` route
 * without x-tenant, the token's own tenant (`tid`), verified like any other. With x-tenant the
 * token's claims are not decoded for a hint: verifying it in that tenant refuses a token of another
 * (its tid and aud), as on every route. Without a promise when the authenticator answers without
 * one (route.ts runs these hooks in fastify's callback form).
 */
export function requireAuthentication(request: FastifyRequest): void | Promise<void> {
  const token = bearerToken(request);
  const tenant =
    request.tenant === null && request.routeOptions.config?.tenant === 'credential'
      ? adoptTenant(request, tenantClaimOf(token), { missing: tokenInvalid, foreign: tokenInvalid })
      : tenantOf(request);
  if (tenant instanceof Promise) {
    return tenant.then(async (adopted) => {
      request.principal = await request.server.authenticator.authenticate(token, adopted.name);
    });
  }
  const principal = request.server.authenticator.authenticate(token, tenant.name);
  if (!(principal instanceof Promise)) {
    request.principal = principal;
    return;
  }
  return principal.then((authenticated) => {
    request.principal = authenticated;
  });
}

/** Route hook: a valid token whose roles grant every one of `permissions` (admin:all grants everything). */
export function requirePermission(...permissions: string[]) {
  const holdsAll = (request: FastifyRequest): void => {
    const held = request.principal!.permissions;
    const missing = held.has('admin:all') ? undefined : permissions.find((permission) => !held.has(permission));
    if (missing) throw platformError('PERMISSION_DENIED', `Permission ${missing} is required`);
  };
  return function checkPermission(request: FastifyRequest): void | Promise<void> {
    const authenticating = requireAuthentication(request);
    if (!authenticating) return holdsAll(request);
    return authenticating.then(() => holdsAll(request));
  };
}

/** The principal of a route guarded by one of the hooks above. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw platformError('TOKEN_INVALID', 'A bearer access token is required');
  return request.principal;
}

/** Route hook: admin:all held in the platform tenant (platform-wide administration). */
export function requirePlatformAdmin(platformTenant: string | undefined) {
  const adminAll = requirePermission('admin:all');
  return async function checkPlatformAdmin(request: FastifyRequest): Promise<void> {
    await adminAll(request);
    if (!platformTenant || request.tenant?.name !== platformTenant) {
      throw platformError('PERMISSION_DENIED', 'This is managed from the platform tenant');
    }
  };
}

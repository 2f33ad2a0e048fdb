import type { FastifyRequest } from 'fastify';
import { platformError, type DomainError } from '../errors.ts';
import type { HttpServer } from './server.ts';

export interface TenantRef {
  id: string;
  name: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant named by x-tenant, resolved before the route runs (null on tenant-less routes). */
    tenant: TenantRef | null;
  }
  interface FastifyInstance {
    findTenant(name: string): TenantRef | null | Promise<TenantRef | null>;
  }
}

export const TENANT_NAME = /^[a-z0-9][a-z0-9-]{1,62}$/;

/** The resolved tenant of a route that requires one. */
export function tenantOf(request: FastifyRequest): TenantRef {
  if (!request.tenant) throw platformError('MISSING_TENANT', 'The x-tenant header is required');
  return request.tenant;
}

/**
 * Resolves x-tenant on every /api route that needs it, before body parsing and validation:
 * missing -> 400 MISSING_TENANT (unless a development default is set), unknown -> 404 TENANT_NOT_FOUND.
 */
/** How a `tenant: 'credential'` route refuses a credential whose tenant it cannot adopt. */
export interface CredentialTenantErrors {
  /** Neither x-tenant nor the credential names a tenant. */
  missing: () => DomainError;
  /** The credential names another tenant than x-tenant, or one that does not exist. */
  foreign: () => DomainError;
}

/**
 * The tenant of a `tenant: 'credential'` route: x-tenant when sent (the credential, when it names
 * one, must name the same), else the tenant the credential names. The name is only a claim: the
 * caller still verifies the credential in that tenant (a token's signature and tid, a refresh
 * token's session stream).
 */
export function adoptTenant(request: FastifyRequest, named: string | null, errors: CredentialTenantErrors): TenantRef | Promise<TenantRef> {
  if (request.tenant) {
    if (named !== null && named !== request.tenant.name) throw errors.foreign();
    return request.tenant;
  }
  if (named === null) throw errors.missing();
  if (!TENANT_NAME.test(named)) throw errors.foreign();
  const found = request.server.findTenant(named);
  return found instanceof Promise ? found.then((tenant) => adopted(request, tenant, errors)) : adopted(request, found, errors);
}

function adopted(request: FastifyRequest, tenant: TenantRef | null, errors: CredentialTenantErrors): TenantRef {
  if (!tenant) throw errors.foreign();
  request.tenant = tenant;
  return tenant;
}

// Module-level, not a closure per request: the tsx loader wraps every named closure in __name() as it is made.
function resolvedTo(request: FastifyRequest, tenant: TenantRef | null, done: (error?: Error) => void): void {
  if (!tenant) return done(platformError('TENANT_NOT_FOUND', 'Tenant not found'));
  request.tenant = tenant;
  done();
}

export function registerTenantResolution(
  app: HttpServer,
  options: { find: (name: string) => TenantRef | null | Promise<TenantRef | null>; defaultTenant?: string | undefined },
): void {
  app.decorateRequest('tenant', null);
  app.decorate('findTenant', options.find);
  // Callback form: a route that names no tenant here (health, a token request without x-tenant) costs no promise and no tick.
  app.addHook('onRequest', (request, _reply, done) => {
    // One read: fastify builds a new routeOptions object at each.
    const { config, url: route } = request.routeOptions;
    if (!route?.startsWith('/api/') || route.startsWith('/api/docs') || config?.tenant === 'none') return done();
    const header = request.headers['x-tenant'];
    const sent = (Array.isArray(header) ? header[0] : header)?.trim();
    // Without the header, a credential route takes its tenant from the credential, not a default.
    if (!sent && config?.tenant === 'credential') return done();
    const name = sent || options.defaultTenant;
    if (!name) return done(platformError('MISSING_TENANT', 'The x-tenant header is required'));
    if (!TENANT_NAME.test(name)) return done(platformError('TENANT_NOT_FOUND', 'Tenant not found'));
    // A tenant already in memory answers without a promise and a tick.
    const found = options.find(name);
    if (found instanceof Promise) found.then((tenant) => resolvedTo(request, tenant, done), done);
    else resolvedTo(request, found, done);
  });
}

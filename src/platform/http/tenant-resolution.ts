import type { FastifyRequest } from 'fastify';
import { platformError } from '../errors.ts';
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
export function registerTenantResolution(
  app: HttpServer,
  options: { find: (name: string) => Promise<TenantRef | null>; defaultTenant?: string | undefined },
): void {
  app.decorateRequest('tenant', null);
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    const route = request.routeOptions.url;
    if (!route?.startsWith('/api/') || route.startsWith('/api/docs') || config?.tenant === 'none') return;
    const header = request.headers['x-tenant'];
    const name = (Array.isArray(header) ? header[0] : header)?.trim() || options.defaultTenant;
    if (!name) throw platformError('MISSING_TENANT', 'The x-tenant header is required');
    const tenant = TENANT_NAME.test(name) ? await options.find(name) : null;
    if (!tenant) throw platformError('TENANT_NOT_FOUND', 'Tenant not found');
    request.tenant = tenant;
  });
}

import type { ErrorEnvelope } from './envelopes.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Whether the route needs the x-tenant header (default: every /api route does). `credential`:
     * OAuth/OIDC endpoints standard clients call; without the header the route adopts the tenant
     * its token names (adoptTenant), with it the two must agree.
     */
    tenant?: 'required' | 'none' | 'credential';
    /** The error envelope of the route's family (default canonical; v1 under /api/v1). */
    errorEnvelope?: ErrorEnvelope;
  }
}

export {};

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
    /**
     * An HTML page a browser navigates to (sign-in, device, logout and link pages): never read
     * by a script of another origin, so never answered with CORS headers (RFC 9700 2.6: no CORS
     * at the authorization endpoint).
     */
    page?: boolean;
  }
}

export {};

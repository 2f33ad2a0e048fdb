import type { ErrorEnvelope } from './envelopes.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Whether the route needs the x-tenant header (default: every /api route does). */
    tenant?: 'required' | 'none';
    /** The error envelope of the route's family (default canonical; v1 under /api/v1). */
    errorEnvelope?: ErrorEnvelope;
  }
}

export {};

import type { FastifyRequest } from 'fastify';
import type { CommandContext } from '../commands/context.ts';
import { tenantOf } from './tenant-resolution.ts';

/** The metadata every event of this request carries. */
export function commandContextOf(request: FastifyRequest): CommandContext {
  const userAgent = request.headers['user-agent'];
  return {
    tenantId: tenantOf(request).name,
    actor: request.principal?.subject ?? 'anonymous',
    clientIp: request.ip,
    userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 512) : null,
    correlationId: request.id,
    causationId: null,
  };
}

import { subjectFieldsToString, type RelationTuple } from '../fga/index.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { Clock } from '../../platform/clock.ts';
import { DomainError, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { AuditEntry } from './entry.ts';
import type { PermissionCheckWriter } from './permission-check-writer.ts';
import { PERMISSION_CHECK } from './vocabulary.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on the FGA check route: each answer (or failure) becomes a PERMISSION_CHECK entry. */
    auditsFgaCheck?: boolean;
  }
}

/** The question an FGA check asked (its body has the tuple's fields). */
type CheckBody = RelationTuple;

// One literal per shape (a spread of an optional key costs more than the rest of the entry).
const checkMetadata = (body: CheckBody, allowed?: boolean) => {
  const object = `${body.objectType}:${body.objectId}`;
  const subject = subjectFieldsToString(body);
  const { relation } = body;
  return allowed === undefined ? { object, relation, subject } : { object, relation, subject, allowed };
};

/**
 * PERMISSION_CHECK entries for every FGA check (its route is named by `fgaCheckUrl`) and every
 * 403 PERMISSION_DENIED, handed to the batched writer without waiting. Must be registered before
 * the routes it watches.
 */
export function registerPermissionCheckAudit(app: FastifyInstance, deps: { writer: PermissionCheckWriter; clock: Clock; fgaCheckUrl: string }): void {
  // Entries of one millisecond share their createdAt text: toISOString costs a fifth of an entry,
  // and a busy instance records several checks a millisecond.
  let lastMs = Number.NaN;
  let lastCreatedAt = '';
  const createdAt = () => {
    const now = deps.clock.now();
    if (now.getTime() !== lastMs) {
      lastMs = now.getTime();
      lastCreatedAt = now.toISOString();
    }
    return lastCreatedAt;
  };
  const entry = (request: FastifyRequest, status: AuditEntry['status'], errorCode: string | null, errorMessage: string | null, metadata: AuditEntry['metadata']): AuditEntry => {
    const userAgent = request.headers['user-agent'];
    return {
      id: newId(),
      tenantId: tenantOf(request).name,
      action: PERMISSION_CHECK,
      userId: request.principal?.subject ?? null,
      resource: null,
      resourceId: null,
      status,
      errorCode,
      errorMessage,
      clientIp: request.ip,
      userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 512) : null,
      metadata,
      createdAt: createdAt(),
    };
  };

  app.addHook('onRoute', (route) => {
    if (route.url !== deps.fgaCheckUrl || route.method !== 'POST') return;
    route.config = { ...route.config, auditsFgaCheck: true };
    // A callback hook, not an async one: no promise per check for a step that never waits.
    const answered = (request: FastifyRequest, reply: { statusCode: number }, payload: unknown, done: (error: null, payload: unknown) => void) => {
      const data = (payload as { ok?: boolean; data?: { allowed?: boolean } }).data;
      if (reply.statusCode === 200 && typeof data?.allowed === 'boolean') {
        deps.writer.record(entry(request, 'success', null, null, checkMetadata(request.body as CheckBody, data.allowed)));
      }
      done(null, payload);
    };
    route.preSerialization = [...[route.preSerialization ?? []].flat(), answered];
  });

  app.addHook('onError', async (request, _reply, error) => {
    if (!request.tenant) return;
    const known = error instanceof DomainError ? error : hasZodFastifySchemaValidationErrors(error) ? validationError('Request validation failed') : null;
    const code = known?.code ?? 'INTERNAL_ERROR';
    const message = known?.message ?? 'Internal server error';
    if (code === 'PERMISSION_DENIED') {
      const metadata = { method: request.method, route: request.routeOptions.url ?? request.url };
      deps.writer.record(entry(request, 'failure', code, message, metadata));
    } else if (request.routeOptions.config.auditsFgaCheck && request.principal) {
      const body = request.body as Partial<CheckBody> | undefined;
      // A body that failed validation is not recorded: it may hold anything (NUL, megabytes).
      const metadata = body?.objectType && code !== 'VALIDATION_ERROR' ? checkMetadata(body as CheckBody) : null;
      deps.writer.record(entry(request, 'failure', code, message, metadata));
    }
  });
}

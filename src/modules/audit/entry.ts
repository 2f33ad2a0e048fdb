import type { RecordedEvent } from '../../platform/eventstore/port.ts';
import { auditRuleOf, type Summary } from './event-mapping.ts';
import type { AuditStatus } from './vocabulary.ts';

/** One row of the audit log (spec, Audit log entry), plus the tenant it belongs to. */
export interface AuditEntry {
  id: string;
  tenantId: string;
  action: string;
  userId: string | null;
  resource: string | null;
  resourceId: string | null;
  status: AuditStatus;
  errorCode: string | null;
  errorMessage: string | null;
  clientIp: string | null;
  userAgent: string | null;
  metadata: Record<string, unknown> | null;
  createdAt: string;
}

/** Actors that are not a user: the entry's userId is null for them. */
const NOT_A_USER = new Set(['system', 'anonymous']);

export const actorUserId = (actor: string): string | null => (NOT_A_USER.has(actor) ? null : actor);

export interface AuditedEvent {
  entry: AuditEntry;
  /** The resource's summary after the event, when the rule keeps one (null: the resource is gone). */
  summary?: { resource: string; resourceId: string; value: Summary | null };
}

/**
 * The audit entry of a recorded event (null when its type is not audited). `before` is the
 * resource's summary before the event. Pure: a replay gives the same entry.
 */
/** `event` with its secrets already masked (the audit projection masks through the event catalogue). */
export function auditEntryOf(event: RecordedEvent, before: Summary | null): AuditedEvent | null {
  const rule = auditRuleOf(event.type);
  if (!rule) return null;
  const data = event.data as never;
  const resourceId = rule.resourceId(data);
  const failure = rule.failure?.(data);
  const after = rule.summary?.(before, data);
  const metadata = {
    ...rule.details?.(data),
    ...(after === undefined ? {} : { before, after }),
  };
  const { metadata: meta } = event;
  const entry: AuditEntry = {
    id: event.id,
    tenantId: meta.tenantId,
    action: rule.pick?.(data) ?? rule.actions[0],
    userId: rule.actor ? rule.actor(data, actorUserId(meta.actor)) : actorUserId(meta.actor),
    resource: rule.resource,
    resourceId,
    status: failure ? 'failure' : 'success',
    errorCode: failure?.code ?? null,
    errorMessage: failure?.message ?? null,
    clientIp: meta.clientIp ?? null,
    userAgent: meta.userAgent ?? null,
    metadata: Object.keys(metadata).length > 0 ? metadata : null,
    createdAt: meta.occurredAt,
  };
  return after === undefined ? { entry } : { entry, summary: { resource: rule.resource, resourceId, value: after } };
}

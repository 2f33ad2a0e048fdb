import { AUDIT_MAPPING, auditEntriesInsert, auditEntryOf, auditRuleOf, eraseAuditEntries, insertAuditEntries, type Summary } from '../src/modules/audit/index.ts';
import type { PoolClient } from '../src/platform/db/pool.ts';
import { eventCatalogue } from '../src/event-catalogue.ts';
import type { RecordedEvent } from '../src/platform/eventstore/port.ts';
import { defineProjection, type ProjectionBatchWrites, type ProjectionHandler } from '../src/platform/projections/projection.ts';

async function summaryBefore(tx: PoolClient, event: RecordedEvent): Promise<Summary | null> {
  const rule = auditRuleOf(event.type);
  if (!rule?.summary) return null;
  const { rows } = await tx.query<{ summary: Summary }>(
    'select summary from audit_resource_summaries where tenant_id = $1 and resource = $2 and resource_id = $3',
    [event.metadata.tenantId, rule.resource, rule.resourceId(event.data as never)],
  );
  return rows[0]?.summary ?? null;
}

const project: ProjectionHandler = async (event, tx) => {
  const audited = entryOf(event, await summaryBefore(tx, event));
  if (!audited) return;
  await insertAuditEntries(tx, [audited.entry]);
  const { entry } = audited;
  const erases = auditRuleOf(event.type)?.erases;
  if (erases && entry.resource && entry.resourceId) {
    await eraseAuditEntries(tx, { tenantId: entry.tenantId, resource: entry.resource, resourceId: entry.resourceId }, erases);
  }
  const { summary } = audited;
  if (!summary) return;
  const key = [audited.entry.tenantId, summary.resource, summary.resourceId];
  await (summary.value === null
    ? tx.query('delete from audit_resource_summaries where tenant_id = $1 and resource = $2 and resource_id = $3', key)
    : tx.query(
        `insert into audit_resource_summaries values ($1, $2, $3, $4)
           on conflict (tenant_id, resource, resource_id) do update set summary = excluded.summary`,
        [...key, summary.value],
      ));
};

/** Secrets never reach an entry: the catalogue masks the event's sensitive fields first. */
const entryOf = (event: RecordedEvent, before: Summary | null) => auditEntryOf({ ...event, data: eventCatalogue.maskedData(event) }, before);

/** A run of events whose rule keeps no summary and erases nothing (tuple writes, logins): one multi-row insert. */
const projectRun: ProjectionBatchWrites = (events) => {
  const entries = events.flatMap((event) => entryOf(event, null)?.entry ?? []);
  return entries.length === 0 ? [] : [auditEntriesInsert(entries)];
};

const audited = Object.keys(AUDIT_MAPPING).filter((type) => auditRuleOf(type));
/** Events that read or change other rows (a summary kept, earlier entries erased) are applied one by one. */
const oneByOne = (type: string) => Boolean(auditRuleOf(type)?.summary || auditRuleOf(type)?.erases);

/**
 * The audit log (migration 0012): one entry per audited event, keyed by the event's id. Only the
 * summaries table is declared: a rebuild empties it and replays every event, while audit_log is
 * never emptied (its triggers refuse it) and the replay's inserts of existing ids do nothing.
 */
export const auditProjection = defineProjection({
  name: 'audit',
  tables: ['audit_resource_summaries'],
  handlers: Object.fromEntries(audited.filter(oneByOne).map((type) => [type, project])),
  // Bulk tuple writes append hundreds of events a request; their entries need no earlier summary.
  batchWrites: Object.fromEntries(audited.filter((type) => !oneByOne(type)).map((type) => [type, projectRun])),
});

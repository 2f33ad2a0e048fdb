// The public surface of the audit module: other modules, the composition root and the read models import only this.
export { auditEntriesInsert, eraseAuditEntries, insertAuditEntries } from './entries-table.ts';
export { auditEntryOf } from './entry.ts';
export { eventFeed } from './event-feed.ts';
export { registerEventFeedRoutes } from './event-feed-routes.ts';
export { AUDIT_MAPPING, auditRuleOf, webhookTypeOf } from './event-mapping.ts';
export type { Summary } from './event-mapping.ts';
export { registerUserHistoryRoutes, userAsOfHandler } from './history-routes.ts';
export { registerPermissionCheckAudit } from './permission-check-hooks.ts';
export { PermissionCheckWriter } from './permission-check-writer.ts';
export { auditQueries } from './queries.ts';
export { registerAuditLogRoutes } from './routes.ts';
export { userHistory } from './user-history.ts';
export { AUDIT_ACTIONS, WEBHOOK_EVENT_TYPES } from './vocabulary.ts';

import { AUDIT_MAPPING } from './event-mapping.ts';
import { AUDIT_ACTIONS } from './vocabulary.ts';

/** Actions that no event produces; where each comes from. */
const OTHER_SOURCES: Record<string, string> = {
  PERMISSION_CHECK: 'written directly by the permission-check writer: every POST /api/fga/check and every 403 PERMISSION_DENIED (not events; see decisions.md)',
  PERMISSION_SYNC: 'reserved for permissions synchronised from an outside source; nothing produces it yet',
};

/** docs/audit-actions.md, generated from the mapping table (a unit test keeps the file in step). */
export function auditActionsDocument(): string {
  const entries = Object.entries(AUDIT_MAPPING);
  const audited = entries.flatMap(([type, rule]) =>
    'actions' in rule
      ? [`| ${type} | ${rule.actions.join(', ')} | ${rule.resource} | ${rule.summary ? 'yes' : 'no'} | ${rule.failure ? 'failure' : 'success'} | ${rule.webhook ?? '-'} |`]
      : [],
  );
  const notAudited = entries.flatMap(([type, rule]) => ('notAudited' in rule ? [`| ${type} | ${rule.notAudited} |`] : []));
  const produced = new Set(entries.flatMap(([, rule]) => ('actions' in rule ? rule.actions : [])));
  const others = AUDIT_ACTIONS.filter((action) => !produced.has(action)).map((action) => `| ${action} | ${OTHER_SOURCES[action] ?? 'nothing'} |`);
  return [
    '# Audit actions',
    '',
    'Generated from `src/modules/audit/event-mapping.ts` by `npm run docs:audit`; a unit test fails when',
    'this file and the table disagree. `userId` is the actor (null for the system and anonymous callers;',
    'a login or signup acts as the account itself). `before/after`: metadata carries the resource\'s',
    'summary before and after the event (secrets "[REDACTED]"; a password change is',
    '`{passwordChanged: true}`). Webhook types are the spec\'s catalogue names: the audit table\'s',
    'user.login is delivered as login.succeeded / login.failed and role.removed as role.unassigned;',
    'user.logout and permission.changed have no catalogue type, so LOGOUT and PERMISSION_SYNC send no webhook.',
    '',
    '## Audited events',
    '',
    '| event | action | resource | before/after | status | webhook |',
    '|---|---|---|---|---|---|',
    ...audited,
    '',
    '## Actions not produced by an event',
    '',
    '| action | source |',
    '|---|---|',
    ...others,
    '',
    '## Events not audited',
    '',
    '| event | why |',
    '|---|---|',
    ...notAudited,
    '',
  ].join('\n');
}

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auditActionsDocument } from '../../../src/modules/audit/actions-doc.ts';
import { AUDIT_MAPPING, auditRuleOf, webhookTypeOf } from '../../../src/modules/audit/event-mapping.ts';
import { AUDIT_ACTIONS, WEBHOOK_EVENT_TYPES } from '../../../src/modules/audit/vocabulary.ts';
import { eventCatalogue } from '../../../src/event-catalogue.ts';

// The one line to change when the event catalogue lands: its list of event types.
const eventTypes = eventCatalogue.definitions.map((definition) => definition.type);

describe('the audit mapping table', () => {
  it('has an entry (audited, or not audited with a reason) for every event type, and none for a type that does not exist', () => {
    expect(eventTypes.length).toBeGreaterThan(30);
    expect(eventTypes.filter((type) => !(type in AUDIT_MAPPING))).toEqual([]);
    expect(Object.keys(AUDIT_MAPPING).filter((type) => !eventTypes.includes(type))).toEqual([]);
    for (const entry of Object.values(AUDIT_MAPPING)) {
      if ('notAudited' in entry) expect(entry.notAudited.length).toBeGreaterThan(20);
    }
  });

  it('names only known actions and webhook catalogue types', () => {
    for (const type of eventTypes) {
      const rule = auditRuleOf(type);
      if (!rule) continue;
      for (const action of rule.actions) expect(AUDIT_ACTIONS).toContain(action);
      if (rule.webhook) expect(WEBHOOK_EVENT_TYPES).toContain(rule.webhook);
    }
  });

  it('gives the spec\'s webhook types and none to types that are not audited', () => {
    expect(webhookTypeOf('UserCreated')).toBe('user.created');
    expect(webhookTypeOf('UserDisabled')).toBe('user.blocked');
    expect(webhookTypeOf('UserRoleRemoved')).toBe('role.unassigned');
    expect(webhookTypeOf('LoginFailed')).toBe('login.failed');
    expect(webhookTypeOf('SessionUsed')).toBeNull();
    expect(webhookTypeOf('NoSuchEvent')).toBeNull();
  });

  it('agrees with docs/audit-actions.md (regenerate it with npm run docs:audit)', () => {
    const document = readFileSync(new URL('../../../docs/audit-actions.md', import.meta.url), 'utf8');
    expect(document).toBe(auditActionsDocument());
  });
});

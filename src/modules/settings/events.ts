import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';
import { sectionSchemas, type SectionName } from './sections.ts';

/** One variant per section: the changed fields of that section, within the section's bounds. */
const sectionChanges = <S extends SectionName>(section: S) =>
  z.strictObject({ section: z.literal(section), changes: sectionSchemas[section].partial() });

export const securitySettingsUpdated = defineEvent({
  type: 'SecuritySettingsUpdated',
  description: "The changed fields of one section of the tenant's security settings.",
  data: z.discriminatedUnion('section', [
    sectionChanges('tokens'),
    sectionChanges('login'),
    sectionChanges('bruteForce'),
    sectionChanges('security'),
    sectionChanges('general'),
    sectionChanges('tokenClaims'),
  ]),
});

export const settingsEvents = [securitySettingsUpdated];

export type SecuritySettingsUpdated = EventOf<typeof securitySettingsUpdated>;
export type SettingsEvent = SecuritySettingsUpdated;

export const settingsStreamId = (tenant: string): string => `settings-${tenant}.security`;

import type { DomainEvent } from '../../platform/commands/decider.ts';
import type { NestedSettings, SectionName } from './sections.ts';

export type SecuritySettingsUpdated = DomainEvent<
  'SecuritySettingsUpdated',
  { section: SectionName; changes: Partial<NestedSettings[SectionName]> }
>;

export type SettingsEvent = SecuritySettingsUpdated;

export const settingsStreamId = (tenant: string): string => `settings-${tenant}.security`;

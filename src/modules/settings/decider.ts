import type { Decider } from '../../platform/commands/decider.ts';
import { validationError } from '../../platform/errors.ts';
import type { SettingsEvent } from './events.ts';
import { crossFieldViolation, DEFAULT_NESTED_SETTINGS, type NestedSettings, type SectionName } from './sections.ts';

export type SettingsCommand = { type: 'UpdateSection'; section: SectionName; data: Record<string, unknown> };

/** The input was already checked against the section's schema; the decider checks the merged result. */
export const settingsDecider: Decider<NestedSettings, SettingsCommand, SettingsEvent> = {
  initialState: () => structuredClone(DEFAULT_NESTED_SETTINGS),
  evolve: (state, event) => ({ ...state, [event.data.section]: { ...state[event.data.section], ...event.data.changes } }),
  decide(command, state) {
    const current = state[command.section] as Record<string, unknown>;
    const changes = Object.fromEntries(
      Object.entries(command.data).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(current[key])),
    );
    const merged = { ...state, [command.section]: { ...current, ...changes } } as NestedSettings;
    const violation = crossFieldViolation(merged);
    if (violation) throw validationError(violation.message, [violation]);
    if (Object.keys(changes).length === 0) return [];
    return [{ type: 'SecuritySettingsUpdated', data: { section: command.section, changes } }];
  },
};

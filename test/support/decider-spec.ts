import { expect } from 'vitest';
import type { Decider, DomainEvent } from '../../src/platform/commands/decider.ts';
import { fold } from '../../src/platform/commands/decider.ts';

/** given(events).when(command).then(events) | .thenThrows(code) for pure deciders. */
export function deciderSpec<State, Command, Event extends DomainEvent>(decider: Decider<State, Command, Event>) {
  return {
    given(events: Event[]) {
      return {
        when(command: Command) {
          const run = () => decider.decide(command, fold(decider, events));
          return {
            then(expected: Event[]) {
              expect(run()).toEqual(expected);
            },
            thenThrows(code: string) {
              expect(run).toThrowError(expect.objectContaining({ code }));
            },
          };
        },
      };
    },
  };
}

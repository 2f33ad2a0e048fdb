import { expect } from 'vitest';
import type { Decider, DomainEvent } from '../../src/platform/commands/decider.ts';
import { fold } from '../../src/platform/commands/decider.ts';

/** Freezes a state through and through: a decider that changes a remembered state then throws. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * given(events).when(command).then(events) | .thenThrows(code) for pure deciders. Every decision
 * is checked in both forms the command handler uses: on the whole stream folded, and on a state
 * remembered after each prefix of it (frozen, as FoldedStates shares it) with the rest folded on top.
 */
export function deciderSpec<State, Command, Event extends DomainEvent>(decider: Decider<State, Command, Event>) {
  return {
    given(events: Event[]) {
      return {
        when(command: Command) {
          const decisions = [
            () => decider.decide(command, fold(decider, events)),
            ...events.map((_, split) => () => {
              const remembered = deepFreeze(fold(decider, events.slice(0, split + 1)));
              return decider.decide(command, events.slice(split + 1).reduce(decider.evolve, remembered));
            }),
          ];
          return {
            then(expected: Event[]) {
              for (const decide of decisions) expect(decide()).toEqual(expected);
            },
            thenThrows(code: string) {
              for (const decide of decisions) expect(decide).toThrowError(expect.objectContaining({ code }));
            },
          };
        },
      };
    },
  };
}

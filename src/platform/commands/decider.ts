/** A domain event before it is recorded: its type and data, nothing about storage. */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
}

/**
 * The pure core of an aggregate (Emmett's decider): no I/O, no clock, no randomness; whatever a
 * decision needs from outside (ids, hashes, time) arrives inside the command.
 */
export interface Decider<State, Command, Event extends DomainEvent> {
  initialState: () => State;
  evolve: (state: State, event: Event) => State;
  decide: (command: Command, state: State) => Event[];
}

export function fold<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
  events: Event[],
): State {
  return events.reduce(decider.evolve, decider.initialState());
}

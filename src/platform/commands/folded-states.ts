import type { EventStore } from '../eventstore/port.ts';

/** A stream's state as this instance last folded it, and the revision of the last event in it. */
export interface FoldedState<State> {
  state: State;
  revision: bigint;
}

/** Streams remembered per decider and store; the least recently folded goes first. */
const MAX_STREAMS = 20_000;

// Per store object (each service instance wraps its own) and per decider: one stream may be folded
// by several deciders, and two services in one process never share states.
const byStore = new WeakMap<EventStore, WeakMap<object, Map<string, FoldedState<unknown>>>>();

/**
 * The states commands folded last, so the next command on a stream reads only the events after
 * them (a session refreshed for the thousandth time reads no history). Events are immutable, so a
 * remembered state plus the stream's tail is the whole fold; an append expecting the remembered
 * revision fails if another writer got there first, and the command then reads the stream anew.
 */
export class FoldedStates<State> {
  private constructor(private readonly states: Map<string, FoldedState<unknown>>) {}

  static of<State>(store: EventStore, decider: object): FoldedStates<State> {
    let perDecider = byStore.get(store);
    if (!perDecider) byStore.set(store, (perDecider = new WeakMap()));
    let states = perDecider.get(decider);
    if (!states) perDecider.set(decider, (states = new Map()));
    return new FoldedStates<State>(states);
  }

  get(streamId: string): FoldedState<State> | undefined {
    return this.states.get(streamId) as FoldedState<State> | undefined;
  }

  /** Keeps the newer of the remembered and the given state: a read that started before an append may end after it. */
  remember(streamId: string, folded: FoldedState<State>): void {
    const known = this.states.get(streamId);
    if (known && known.revision > folded.revision) return;
    this.states.delete(streamId);
    if (this.states.size >= MAX_STREAMS) this.states.delete(this.states.keys().next().value!);
    this.states.set(streamId, folded);
  }

  forget(streamId: string): void {
    this.states.delete(streamId);
  }
}

import type { Clock } from '../clock.ts';
import { WrongExpectedVersionError } from '../eventstore/errors.ts';
import type { EventStore, NewEvent, StreamAppend } from '../eventstore/port.ts';
import { newId } from '../ids.ts';
import type { CommandContext } from './context.ts';
import { KeyedMutex } from './keyed-mutex.ts';
import type { Decider, DomainEvent } from './decider.ts';
import { FoldedStates, type FoldedState } from './folded-states.ts';

export interface CommandResult<State, Event> {
  state: State;
  events: Event[];
  /** Global position of the last appended event; 0n when the command changed nothing. */
  position: bigint;
  /** When the events happened (their metadata's occurredAt); null when nothing was appended. */
  occurredAt: string | null;
}

/** When a command last changed its aggregate: its events' time, or `previous` when it changed nothing. */
export const changedAt = (result: { occurredAt: string | null }, previous: string): string =>
  result.occurredAt ? new Date(result.occurredAt).toISOString() : previous;

/** Extra streams appended atomically with the aggregate's events (uniqueness reservations). */
export type SideAppends<State, Event> = (events: Event[], stateBefore: State) => Promise<StreamAppend[]> | StreamAppend[];

export interface CommandDeps {
  store: EventStore;
  clock: Clock;
}

/**
 * The context a command's events are recorded with, or a function choosing it from the events
 * decided (a module that records some of its facts without the request's metadata).
 */
export type EventsContext<Event> = CommandContext | ((events: Event[]) => CommandContext);

const contextOf = <Event>(context: EventsContext<Event>, events: Event[]): CommandContext => (typeof context === 'function' ? context(events) : context);

/** Hot streams (one account logging in from many devices) may need a few rounds under contention. */
export const MAX_ATTEMPTS = 10;

const streamQueue = new KeyedMutex();

export const jitter = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * attempt));

export function toNewEvents(events: DomainEvent[], context: CommandContext, clock: Clock): NewEvent[] {
  const occurredAt = clock.now().toISOString();
  return events.map((event) => ({
    id: newId(),
    type: event.type,
    data: event.data,
    metadata: {
      tenantId: context.tenantId,
      actor: context.actor,
      clientIp: context.clientIp ?? null,
      userAgent: context.userAgent ?? null,
      correlationId: context.correlationId ?? null,
      causationId: context.causationId ?? null,
      occurredAt,
    },
  }));
}

/**
 * Load the stream, decide, append with the revision read. Commands on one stream queue inside this
 * instance; a writer in another instance makes the append fail, and the whole decision is then
 * retried on fresh state after a short jitter. A stream this instance folded before is not read
 * when the decision on the remembered state appends (one round trip: the append checks it).
 */
export function handleCommand<State, Command, Event extends DomainEvent>(
  deps: CommandDeps,
  decider: Decider<State, Command, Event>,
  streamId: string,
  command: Command,
  context: EventsContext<Event>,
  sideAppends?: SideAppends<State, Event>,
): Promise<CommandResult<State, Event>> {
  return streamQueue.run(streamId, async () => {
    // After a remembered state proved stale once, this command reads the stream on every attempt.
    let trustRemembered = true;
    for (let attempt = 1; ; attempt += 1) {
      const remembered = trustRemembered ? decideOnRemembered(deps, decider, streamId, command, context) : null;
      const { state, events, append: own } = remembered ?? (await decideAppend(deps, decider, streamId, command, context));
      if (!own) return { state, events, position: 0n, occurredAt: null };
      const folded = FoldedStates.of<State>(deps.store, decider);
      try {
        const extra = sideAppends ? await sideAppends(events, state) : [];
        const results = await deps.store.appendMulti([own, ...extra]);
        const after = events.reduce(decider.evolve, state);
        folded.remember(streamId, { state: after, revision: results[0]!.nextExpectedRevision });
        return { state: after, events, position: lastPosition(results), occurredAt: own.events[0]!.metadata.occurredAt };
      } catch (error) {
        const ownStreamConflict = error instanceof WrongExpectedVersionError && error.streamId === streamId;
        // Another writer appended (or the remembered state is of no use): the next attempt reads the whole stream.
        if (ownStreamConflict) folded.forget(streamId);
        if (!ownStreamConflict || attempt >= MAX_ATTEMPTS) throw error;
        // A remembered state that was stale is no contention: read the stream at once.
        if (remembered) trustRemembered = false;
        else await jitter(attempt);
      }
    }
  });
}

/**
 * The command decided on the state this instance folded last, without reading the stream, when
 * that decision appends: the append expects the remembered revision, so it fails if another writer
 * moved the stream on, and the retry reads it. A decision that appends nothing or refuses could
 * rest on a stale state, so it is not taken here (null): the caller decides on the stream as read.
 */
function decideOnRemembered<State, Command, Event extends DomainEvent>(
  deps: CommandDeps,
  decider: Decider<State, Command, Event>,
  streamId: string,
  command: Command,
  context: EventsContext<Event>,
): { state: State; events: Event[]; append: StreamAppend } | null {
  const known = FoldedStates.of<State>(deps.store, decider).get(streamId);
  if (!known) return null;
  let events: Event[];
  try {
    events = decider.decide(command, known.state);
  } catch {
    return null;
  }
  if (events.length === 0) return null;
  return { state: known.state, events, append: { streamId, expectedRevision: known.revision, events: toNewEvents(events, contextOf(context, events), deps.clock) } };
}

/**
 * Loads a stream and decides a command on it without appending: the append (null when nothing
 * changes), expecting the revision read, for the caller to commit, possibly with other streams.
 */
export async function decideAppend<State, Command, Event extends DomainEvent>(
  deps: CommandDeps,
  decider: Decider<State, Command, Event>,
  streamId: string,
  command: Command,
  context: EventsContext<Event>,
): Promise<{ state: State; events: Event[]; append: StreamAppend | null }> {
  const { state, revision } = await loadState(deps, decider, streamId);
  const events = decider.decide(command, state);
  if (events.length === 0) return { state, events, append: null };
  const expectedRevision = revision ?? 'no_stream';
  return { state, events, append: { streamId, expectedRevision, events: toNewEvents(events, contextOf(context, events), deps.clock) } };
}

type Evolving<State, Event extends DomainEvent> = Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>;

/** A stream's state and the revision of its last event (undefined: no stream). */
export interface LoadedState<State> {
  state: State;
  revision: bigint | undefined;
}

/**
 * Folds a stream's tail onto `base`, the state this instance had folded when the read started (or
 * the initial state), and remembers the result (FoldedStates keeps the newer of two). The base is
 * taken before the read because the remembered state may change during it: another read may fold
 * further, a conflict forget it, the cache evict it. A stream read twice in one round trip gets
 * both tails in one list: an event is folded once, in revision order.
 */
function foldTail<State, Event extends DomainEvent>(
  store: EventStore,
  decider: Evolving<State, Event>,
  streamId: string,
  base: FoldedState<State> | undefined,
  tail: unknown[],
): LoadedState<State> {
  let revision = base?.revision;
  const events = (tail as (Event & { revision: bigint })[]).filter((event) => {
    if (revision !== undefined && event.revision <= revision) return false;
    revision = event.revision;
    return true;
  });
  const state = events.reduce(decider.evolve, base ? base.state : decider.initialState());
  if (revision !== undefined) FoldedStates.of<State>(store, decider).remember(streamId, { state, revision });
  return { state, revision };
}

const tailStart = (base: FoldedState<unknown> | undefined): bigint => (base ? base.revision + 1n : 0n);

/**
 * A stream's current state and the revision of its last event (undefined: no stream), read from
 * after the state this instance folded last (FoldedStates), if any.
 */
export async function loadState<State, Event extends DomainEvent>(
  deps: Pick<CommandDeps, 'store'>,
  decider: Evolving<State, Event>,
  streamId: string,
): Promise<LoadedState<State>> {
  const base = FoldedStates.of<State>(deps.store, decider).get(streamId);
  const tail = await deps.store.readStream(streamId, tailStart(base));
  return foldTail(deps.store, decider, streamId, base, tail);
}

/** A stream to load with `loadStates`, and the decider that folds it. */
export interface StateRead<State> {
  decider: Evolving<State, any>;
  streamId: string;
}

/** Several streams' states (as loadState) in one round trip: each stream's tail read in one query. */
// Any state and event type: each read folds its own stream.
export async function loadStates<const Reads extends readonly StateRead<any>[]>(
  deps: Pick<CommandDeps, 'store'>,
  reads: Reads,
): Promise<{ [K in keyof Reads]: Reads[K] extends StateRead<infer State> ? LoadedState<State> : never }> {
  const { store } = deps;
  const bases = reads.map((read) => FoldedStates.of(store, read.decider).get(read.streamId));
  const tails = await store.readStreams(
    reads.map((read) => read.streamId),
    bases.map(tailStart),
  );
  return reads.map((read, i) => foldTail(store, read.decider, read.streamId, bases[i], tails[i]!)) as never;
}

/** The highest global position among append results: what read-your-writes waits for. */
export function lastPosition(results: { position: bigint }[]): bigint {
  return results.reduce((max, r) => (r.position > max ? r.position : max), 0n);
}

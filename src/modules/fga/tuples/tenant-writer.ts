import type { CommandContext } from '../../../platform/commands/context.ts';
import type { CommandDeps } from '../../../platform/commands/handle-command.ts';
import { MAX_ATTEMPTS, toNewEvents } from '../../../platform/commands/handle-command.ts';
import { platformError } from '../../../platform/errors.ts';
import { WrongExpectedVersionError } from '../../../platform/eventstore/errors.ts';
import type { ExpectedRevision } from '../../../platform/eventstore/port.ts';
import { outsideRequests } from '../../../platform/projections/read-your-writes.ts';
import { tupleToString } from '../tuple.ts';
import { recordChanges, tenantTuplesDecider, type ChangeTuples, type TupleSet } from './decider.ts';
import { tenantTuplesStreamId, type FgaTupleEvent } from './events.ts';

/** This instance's in-memory tuple index, fed by the log. */
export interface TupleIndex {
  /** The tenant's tuples as the index holds them now (live: use them at once), and the log position they reflect. */
  current(tenant: string): Promise<{ tuples: TupleSet; position: bigint }>;
  /** Whether the index has applied the log up to `position`, waiting (bounded). */
  reached(position: bigint): Promise<boolean>;
}

export interface TenantTupleWriterDeps extends CommandDeps {
  index: TupleIndex;
}

export interface TupleWriteResult {
  /** The event recorded for the request (null: nothing changed). */
  event: FgaTupleEvent | null;
  /** Where a reader sees the request's effect (the group's last event; for a no-op, the state decided on). */
  position: bigint;
}

interface Pending {
  command: ChangeTuples;
  context: CommandContext;
  resolve(result: TupleWriteResult): void;
  reject(error: unknown): void;
}

/** This instance's own appends the index has not applied yet. */
interface Unindexed {
  position: bigint;
  events: FgaTupleEvent[];
}

interface Lane {
  queue: Pending[];
  writing: boolean;
  /** The tenant stream's revision this instance last saw (null: unknown yet, tried as no stream). */
  revision: ExpectedRevision | null;
  /** Decisions lay these over the index, so the next group need not wait for the index to read them back. */
  unindexed: Unindexed[];
  /** After another instance appended: the index must reach this position before the next decision. */
  mustSee: bigint;
}

/** Requests decided together and appended in one call. */
const MAX_GROUP = 64;

/**
 * A tenant's tuple changes, decided one request after another against the instance's in-memory
 * tuple index (with this instance's appends it has not read back yet laid over it) and appended to
 * the tenant's tuple stream with the revision that state reflects.
 * Requests that arrive while an append is in flight are decided together (each on the state the
 * ones before it leave) and appended in one call, one event each: a request's rejection (TUPLE_EXISTS)
 * touches no other. Another instance's append makes ours fail on the revision; the group is decided
 * again once the index has applied the log up to it.
 */
export class TenantTupleWriter {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly deps: TenantTupleWriterDeps) {}

  submit(tenant: string, command: ChangeTuples, context: CommandContext): Promise<TupleWriteResult> {
    return new Promise((resolve, reject) => {
      const lane = this.laneOf(tenant);
      lane.queue.push({ command, context, resolve, reject });
      if (lane.writing) return;
      lane.writing = true;
      // The group's appends belong to no single request: each request reports its own write.
      void outsideRequests(() => this.drain(tenant, lane));
    });
  }

  private laneOf(tenant: string): Lane {
    let lane = this.lanes.get(tenant);
    if (!lane) {
      lane = { queue: [], writing: false, revision: null, unindexed: [], mustSee: 0n };
      this.lanes.set(tenant, lane);
    }
    return lane;
  }

  private async drain(tenant: string, lane: Lane): Promise<void> {
    try {
      while (lane.queue.length > 0) {
        // Requests that arrive in the same turn of the event loop join the group.
        await new Promise((resolve) => setImmediate(resolve));
        const group = lane.queue.splice(0, MAX_GROUP);
        await this.write(tenant, lane, group).catch((error: unknown) => group.forEach((pending) => pending.reject(error)));
      }
    } finally {
      lane.writing = false;
    }
  }

  private async write(tenant: string, lane: Lane, group: Pending[]): Promise<void> {
    let caughtUp = false;
    for (let attempt = 1; ; attempt += 1) {
      if (!(await this.deps.index.reached(lane.mustSee))) throw platformError('SERVICE_UNAVAILABLE', 'The tuple index lags behind the log; retry the request');
      const indexed = await this.deps.index.current(tenant);
      lane.unindexed = lane.unindexed.filter((appended) => appended.position > indexed.position);
      const decidedOn = lane.unindexed.at(-1)?.position ?? indexed.position;
      const state = lane.unindexed.flatMap((appended) => appended.events).reduce(tenantTuplesDecider.evolve, indexed.tuples);
      const outcomes = decideInTurn(state, group);
      const appending = outcomes.flatMap((outcome, i) => ('events' in outcome && outcome.events.length > 0 ? [{ pending: group[i]!, events: outcome.events }] : []));
      let position = decidedOn;
      if (appending.length === 0 && !caughtUp) {
        // Only refusals and no-op deletes: no append checks the state, which may miss another
        // instance's latest change. Decide once more on the index caught up with the log.
        caughtUp = true;
        lane.mustSee = await this.deps.store.lastWrittenPosition();
        continue;
      }
      if (appending.length > 0) {
        const events = appending.flatMap(({ pending, events }) => toNewEvents(events, pending.context, this.deps.clock));
        try {
          const result = await this.deps.store.append(tenantTuplesStreamId(tenant), events, lane.revision ?? 'no_stream');
          lane.revision = result.nextExpectedRevision;
          lane.unindexed.push({ position: result.position, events: appending.flatMap((decided) => decided.events) });
          position = result.position;
        } catch (error) {
          if (!(error instanceof WrongExpectedVersionError) || attempt >= MAX_ATTEMPTS) throw error;
          // Another instance appended: decide again once the index has read the log that far (our own appends included).
          lane.revision = error.actual === 'no_stream' ? 'no_stream' : error.actual;
          lane.mustSee = await this.deps.store.lastWrittenPosition();
          lane.unindexed = [];
          continue;
        }
      }
      outcomes.forEach((outcome, i) => {
        const pending = group[i]!;
        if ('error' in outcome) pending.reject(outcome.error);
        else pending.resolve({ event: outcome.events[0] ?? null, position });
      });
      return;
    }
  }
}

type Outcome = { events: FgaTupleEvent[] } | { error: unknown };

/**
 * Each request decided on the tuples the ones before it leave; a rejected request leaves them as they
 * were. The group's changes go into one map, which is what evolving the state by each accepted
 * event gives, without a layer per request (a lookup walked up to eight, and merging them copied).
 */
function decideInTurn(tuples: TupleSet, group: Pending[]): Outcome[] {
  const changed = new Map<string, boolean>();
  const state: TupleSet = { has: (tuple) => (changed.size === 0 ? tuples.has(tuple) : (changed.get(tupleToString(tuple)) ?? tuples.has(tuple))) };
  return group.map((pending) => {
    try {
      const events = tenantTuplesDecider.decide(pending.command, state);
      for (const event of events) recordChanges(changed, event);
      return { events };
    } catch (error) {
      return { error };
    }
  });
}

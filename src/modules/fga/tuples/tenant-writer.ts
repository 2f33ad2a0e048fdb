import type { CommandContext } from '../../../platform/commands/context.ts';
import type { CommandDeps } from '../../../platform/commands/handle-command.ts';
import { MAX_ATTEMPTS, toNewEvents } from '../../../platform/commands/handle-command.ts';
import { platformError } from '../../../platform/errors.ts';
import { WrongExpectedVersionError } from '../../../platform/eventstore/errors.ts';
import type { ExpectedRevision } from '../../../platform/eventstore/port.ts';
import { outsideRequests } from '../../../platform/projections/read-your-writes.ts';
import { tenantTuplesDecider, type ChangeTuples, type TupleSet } from './decider.ts';
import { tenantTuplesStreamId, type FgaTupleEvent } from './events.ts';

/** The tenant's tuples as this instance's index holds them once it has applied the log up to a position. */
export interface TupleIndex {
  /** The tenant's tuples once the index has applied every event up to `position`; null if it did not within the bound. */
  tuplesAt(tenant: string, position: bigint): Promise<{ tuples: TupleSet; position: bigint } | null>;
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

interface Lane {
  queue: Pending[];
  writing: boolean;
  /** The tenant stream's revision this instance last saw (null: unknown yet, tried as no stream). */
  revision: ExpectedRevision | null;
  /** The index must have applied the log this far before a decision (this instance's last append, or a rival's). */
  seenPosition: bigint;
}

/** Requests decided together and appended in one call. */
const MAX_GROUP = 64;

/**
 * A tenant's tuple changes, decided one request after another against the instance's in-memory
 * tuple index and appended to the tenant's tuple stream with the revision the index reflects.
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
      lane = { queue: [], writing: false, revision: null, seenPosition: 0n };
      this.lanes.set(tenant, lane);
    }
    return lane;
  }

  private async drain(tenant: string, lane: Lane): Promise<void> {
    try {
      while (lane.queue.length > 0) {
        const group = lane.queue.splice(0, MAX_GROUP);
        await this.write(tenant, lane, group).catch((error: unknown) => group.forEach((pending) => pending.reject(error)));
      }
    } finally {
      lane.writing = false;
    }
  }

  private async write(tenant: string, lane: Lane, group: Pending[]): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const state = await this.deps.index.tuplesAt(tenant, lane.seenPosition);
      if (!state) throw platformError('SERVICE_UNAVAILABLE', 'The tuple index lags behind the log; retry the request');
      const outcomes = decideInTurn(state.tuples, group);
      const appending = outcomes.flatMap((outcome, i) => ('events' in outcome && outcome.events.length > 0 ? [{ pending: group[i]!, events: outcome.events }] : []));
      let position = state.position;
      if (appending.length > 0) {
        const events = appending.flatMap(({ pending, events }) => toNewEvents(events, pending.context, this.deps.clock));
        try {
          const result = await this.deps.store.append(tenantTuplesStreamId(tenant), events, lane.revision ?? 'no_stream');
          lane.revision = result.nextExpectedRevision;
          lane.seenPosition = result.position;
          position = result.position;
        } catch (error) {
          if (!(error instanceof WrongExpectedVersionError) || attempt >= MAX_ATTEMPTS) throw error;
          // Another instance appended: decide again once the index has its events.
          lane.revision = error.actual === 'no_stream' ? 'no_stream' : error.actual;
          lane.seenPosition = await this.deps.store.lastWrittenPosition();
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

/** Each request decided on the tuples the ones before it leave; a rejected request leaves them as they were. */
function decideInTurn(tuples: TupleSet, group: Pending[]): Outcome[] {
  let state = tuples;
  return group.map((pending) => {
    try {
      const events = tenantTuplesDecider.decide(pending.command, state);
      for (const event of events) state = tenantTuplesDecider.evolve(state, event);
      return { events };
    } catch (error) {
      return { error };
    }
  });
}

import type { Logger } from 'pino';
import type { Pool } from '../db/pool.ts';
import type { EventStore, RecordedEvent, Subscription } from '../eventstore/port.ts';
import { FollowerGroup } from '../projections/follower-group.ts';
import { IdleBatches } from '../projections/idle-batches.ts';
import { PositionWaiters } from '../projections/position-waiters.ts';
import { beginLocked, commitCheckpoint, ensureReactionCheckpoint, type ReactionCheckpoint } from './checkpoints.ts';
import { LockSession } from './lock-session.ts';
import { reactionContextOf, type Reaction } from './reaction.ts';

/** The read models a reaction may look its targets up in (the projection runner). */
export interface ReadModels {
  waitFor(position: bigint, timeoutMs: number, names?: string[]): Promise<boolean>;
}

export interface ReactionDeps {
  store: EventStore;
  pool: Pool;
  logger: Logger;
  readModels: ReadModels;
  /** How long a handler waits for a read model before the event is retried. */
  readModelTimeoutMs?: number;
}

const BATCH_SIZE = 100;
const DEFAULT_READ_MODEL_TIMEOUT_MS = 30_000;

const later = (a: bigint, b: bigint) => (a > b ? a : b);

/**
 * Follows the global log from the reaction's own checkpoint and runs its handlers. A batch runs
 * inside a transaction holding the reaction's advisory lock (on a connection outside the pool), so
 * of several instances one acts and the others find the checkpoint past the batch and skip it.
 * The checkpoint moves only once the batch's commands succeeded; a failure (logged) rolls it back
 * and the subscription delivers the same batch again after a backoff, so commands may run twice
 * and must be idempotent.
 */
export class ReactionWorker {
  readonly waiters = new PositionWaiters();
  /** The highest position this reaction's commands are known to have appended. */
  caused = 0n;
  lastError: unknown = null;
  private subscription: Subscription | null = null;
  private readonly lock: LockSession;
  /** Batches with nothing to react to pass without a transaction (nothing is lost if read again). */
  private readonly idle = new IdleBatches((type) => Boolean(this.reaction.handlers[type]));

  constructor(
    readonly reaction: Reaction,
    private readonly deps: ReactionDeps,
  ) {
    this.lock = new LockSession(deps.pool.options, reaction.name);
  }

  get running(): boolean {
    return this.subscription !== null;
  }

  async start(): Promise<void> {
    const checkpoint = await ensureReactionCheckpoint(this.deps.pool, this.reaction.name);
    this.reached(checkpoint);
    this.subscription = this.deps.store.subscribeToAll({
      after: checkpoint.position,
      batchSize: BATCH_SIZE,
      onEvents: async (events) =>
        this.reached(this.idle.pass(events, await this.nothingToDo(events)) ? { position: events.at(-1)!.position, caused: this.caused } : await this.react(events)),
      onError: (error) => {
        this.lastError = error;
        this.deps.logger.error({ err: error, reaction: this.reaction.name }, 'reaction failed; retrying');
      },
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    this.subscription = null;
    await this.lock.close();
  }

  private reached(checkpoint: ReactionCheckpoint): void {
    this.caused = later(this.caused, checkpoint.caused);
    this.waiters.advance(checkpoint.position);
    this.lastError = null;
  }

  /** Whether every event of the batch its handlers take is one the reaction's own check says needs nothing (a failed check: react). */
  private async nothingToDo(events: RecordedEvent[]): Promise<boolean> {
    const { handlers, nothingToDo } = this.reaction;
    if (!nothingToDo) return false;
    for (const event of events) {
      if (!handlers[event.type]) continue;
      const check = nothingToDo[event.type];
      if (!check || !(await check(event, this.contextOf(event)).catch(() => false))) return false;
    }
    return true;
  }

  private contextOf(event: RecordedEvent) {
    return { command: reactionContextOf(event), readModelsPassed: (names: string[]) => this.readModelsPassed(event, names) };
  }

  private async react(events: RecordedEvent[]): Promise<ReactionCheckpoint> {
    const { name, handlers } = this.reaction;
    return this.lock.transaction(async (tx) => {
      const checkpoint = await beginLocked(tx, name);
      let caused = checkpoint.caused;
      for (const event of events) {
        const handler = handlers[event.type];
        if (!handler || event.position <= checkpoint.position) continue;
        const position = await handler(event, this.contextOf(event)).catch((error: unknown) => {
          throw new Error(`reaction ${name} failed on ${event.type} ${event.id} at ${event.position}`, { cause: error });
        });
        caused = later(caused, position);
      }
      const last = events.at(-1)!.position;
      // Another instance reacted already: nothing to move.
      const next = last <= checkpoint.position ? null : { position: last, caused };
      await commitCheckpoint(tx, name, next);
      return next ?? checkpoint;
    });
  }

  private async readModelsPassed(event: RecordedEvent, names: string[]): Promise<void> {
    const timeoutMs = this.deps.readModelTimeoutMs ?? DEFAULT_READ_MODEL_TIMEOUT_MS;
    if (!(await this.deps.readModels.waitFor(event.position, timeoutMs, names))) {
      throw new Error(`read models ${names.join(', ')} did not reach ${event.position} within ${timeoutMs} ms`);
    }
  }
}

/** Runs every reaction of the service; each has its own subscription, so one failing stalls no other. */
export class ReactionRunner extends FollowerGroup<ReactionWorker> {
  constructor(reactions: Reaction[], deps: ReactionDeps) {
    super(reactions.map((r) => new ReactionWorker(r, { ...deps, logger: deps.logger.child({ reaction: r.name }) })));
  }

  /**
   * Waits (bounded) until every reaction has reacted to the events up to `position`. Resolves to the
   * highest position their commands have appended (what read models must pass to show the
   * consequences), or null when the wait timed out.
   */
  async waitFor(position: bigint, timeoutMs: number): Promise<bigint | null> {
    const reached = await Promise.all(this.workers.map((w) => w.waiters.wait(position, timeoutMs)));
    if (!reached.every(Boolean)) return null;
    return this.workers.reduce((max, w) => later(max, w.caused), 0n);
  }
}

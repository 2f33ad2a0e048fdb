import type { Logger } from 'pino';
import type { Pool } from '../db/pool.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EventStore, RecordedEvent, Subscription } from '../eventstore/port.ts';
import { BatchGroups } from './batch-groups.ts';
import { ensureCheckpoint, readCheckpoint } from './checkpoints.ts';
import { FollowerGroup } from './follower-group.ts';
import { IdleBatches } from './idle-batches.ts';
import { PositionWaiters } from './position-waiters.ts';
import type { AppliedEventsSource } from './read-model-cache.ts';
import { applyEvents, handles, runWrites, writesOf, type Projection } from './projection.ts';

/** How often a worker whose subscription failed asks the database again for its checkpoint. */
const RECOVERY_RETRY_MS = 200;

/**
 * Keeps one read model up to date from the global log. Several instances (or a rebuild command)
 * may run the same projection: each batch locks the checkpoint row, applies only events past it,
 * and a runner whose stream of events no longer joins the checkpoint (a rebuild reset it) rewinds.
 */
export class ProjectionWorker {
  readonly waiters = new PositionWaiters();
  private readonly appliedListeners: ((events: RecordedEvent[]) => void)[] = [];
  private subscription: Subscription | null = null;
  private stopped = true;
  private restarting: Promise<void> | null = null;
  private recovering: Promise<void> | null = null;
  /** Set while the read model re-applies batches a database crash took back. */
  private catchingUpTo: bigint | null = null;
  lastError: unknown = null;

  constructor(
    readonly projection: Projection,
    private readonly store: EventStore,
    private readonly pool: Pool,
    private readonly logger: Logger,
    /** Shared by the workers of one runner, whose batches then commit together. */
    private readonly batches = new BatchGroups(pool),
  ) {}

  get running(): boolean {
    return !this.stopped;
  }

  /** Running, and not re-applying what a database crash took back. */
  get ready(): boolean {
    return this.running && this.recovering === null && this.catchingUpTo === null;
  }

  async start(): Promise<void> {
    this.stopped = false;
    const checkpoint = await ensureCheckpoint(this.pool, this.projection.name);
    this.subscribeFrom(checkpoint);
  }

  private subscribeFrom(position: bigint): void {
    this.waiters.reset(position);
    let expectedAfter = position;
    // The checkpoint as last read or saved; behind expectedAfter by the batches passed without a transaction.
    let saved = position;
    const idle = new IdleBatches((type) => handles(this.projection, type));
    this.subscription = this.store.subscribeToAll({
      after: position,
      // Large: a catching-up projection (a rebuild, a restart) applies this many events per transaction
      // and checkpoint write; live batches are as large as what arrived meanwhile.
      batchSize: 2000,
      onEvents: async (events) => {
        // Nothing this read model handles: no transaction; a later batch saves the checkpoint.
        if (!idle.pass(events)) {
          const applied = await this.applyBatch(saved, events);
          if (applied === 'rewind') return;
          saved = applied;
        }
        expectedAfter = events.at(-1)!.position;
        this.lastError = null;
        this.announceApplied(events);
        // Only as far as this batch: another instance may have saved a checkpoint further on, but
        // the events up to it are not announced here yet, and caches would still hold their entries.
        this.waiters.advance(expectedAfter);
        if (this.catchingUpTo !== null && this.waiters.current >= this.catchingUpTo) this.catchingUpTo = null;
      },
      onError: (error) => {
        this.lastError = error;
        this.logger.error({ err: error, projection: this.projection.name }, 'projection batch failed; retrying');
        this.recovering ??= this.recoverCheckpoint(saved).finally(() => (this.recovering = null));
      },
    });
  }

  /** Hears of the handled events of each batch once the read model has them (caches drop stale entries). */
  onApplied(listener: (events: RecordedEvent[]) => void): void {
    this.appliedListeners.push(listener);
  }

  private announceApplied(events: RecordedEvent[]): void {
    if (this.appliedListeners.length === 0) return;
    const handled = events.filter((event) => handles(this.projection, event.type));
    if (handled.length === 0) return;
    for (const listener of this.appliedListeners) listener(handled);
  }

  /**
   * After a failure (the database may have crashed): batches committed without a WAL flush can be
   * lost together with their checkpoint, so once the database answers, continue from the checkpoint
   * it kept, and report not caught up until the read model is back where it was.
   */
  private async recoverCheckpoint(reached: bigint): Promise<void> {
    while (!this.stopped) {
      try {
        const kept = await readCheckpoint(this.pool, this.projection.name);
        if (kept >= reached || this.stopped) return;
        this.logger.warn({ projection: this.projection.name, kept: String(kept), reached: String(reached) }, 'checkpoint lost in a crash; applying again');
        this.catchingUpTo = reached;
        this.restarting = this.restartFrom(kept);
        return;
      } catch {
        await sleep(RECOVERY_RETRY_MS);
      }
    }
  }

  /**
   * Applies the batch in one transaction; returns the checkpoint reached, or 'rewind' when the
   * checkpoint is behind the one this worker saved (a rebuild reset it). Events between the saved
   * checkpoint and the batch were passed without a transaction: none of them is handled here.
   */
  private async applyBatch(saved: bigint, events: RecordedEvent[]): Promise<bigint | 'rewind'> {
    const { name } = this.projection;
    const last = events.at(-1)!.position;
    // What the work below does on the checkpoint it expects (saved: another runner may have saved it
    // past some of these events), as statements when the projection has them.
    const statements = last > saved ? writesOf(this.projection, events.filter((event) => event.position > saved)) : null;
    const writes = statements === null ? undefined : { statements, reached: last, result: { reached: last } };
    const outcome = await this.batches.apply<{ rewindTo: bigint } | { reached: bigint }>(name, async (tx, checkpoint) => {
      if (checkpoint < saved) return { save: null, result: { rewindTo: checkpoint } };
      if (checkpoint >= last) return { save: null, result: { reached: checkpoint } }; // another runner applied it already
      // On the expected checkpoint the statements built above are the work (a group not sent whole).
      if (statements !== null && checkpoint === saved) await runWrites(statements, tx);
      else await applyEvents(this.projection, events.filter((event) => event.position > checkpoint), tx);
      return { save: last, result: { reached: last } };
    }, saved, events.length, writes);
    if ('rewindTo' in outcome) {
      this.logger.info({ projection: name, position: String(outcome.rewindTo) }, 'checkpoint moved back; rewinding');
      this.restarting = this.restartFrom(outcome.rewindTo);
      return 'rewind';
    }
    return outcome.reached;
  }

  private async restartFrom(position: bigint): Promise<void> {
    const old = this.subscription;
    // Not awaited inside the handler: close() waits for the handler that called us.
    await Promise.resolve();
    await old?.close();
    if (!this.stopped) this.subscribeFrom(position);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.restarting;
    await this.subscription?.close();
    this.subscription = null;
  }
}

/** Runs every projection of the service and answers "have my reads caught up with position P?". */
export class ProjectionRunner extends FollowerGroup<ProjectionWorker> implements AppliedEventsSource {
  /** The workers' shared group transactions. */
  readonly batches: BatchGroups;

  constructor(projections: Projection[], store: EventStore, pool: Pool, logger: Logger) {
    const batches = new BatchGroups(pool, projections.map((p) => p.name));
    super(projections.map((p) => new ProjectionWorker(p, store, pool, logger.child({ projection: p.name }), batches)));
    this.batches = batches;
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.batches.close();
  }

  onApplied(projection: string, listener: (events: RecordedEvent[]) => void): void {
    const worker = this.workers.find((w) => w.projection.name === projection);
    if (!worker) throw new Error(`No projection ${projection}`);
    worker.onApplied(listener);
  }

  /** Every projection runs and none is re-applying what a database crash took back (readiness). */
  get ready(): boolean {
    return this.workers.every((w) => w.ready);
  }

  /** Waits (bounded) until the named projections (all when omitted) have passed `position`. */
  async waitFor(position: bigint, timeoutMs: number, names?: string[]): Promise<boolean> {
    const workers = names ? this.workers.filter((w) => names.includes(w.projection.name)) : this.workers;
    const reached = await Promise.all(workers.map((w) => w.waiters.wait(position, timeoutMs)));
    return reached.every(Boolean);
  }

  /** Whether the projection `name` handles events of `type` (false when there is no such projection). */
  projects(name: string, type: string): boolean {
    const worker = this.workers.find((w) => w.projection.name === name);
    return worker !== undefined && handles(worker.projection, type);
  }

  /**
   * Waits (bounded) until each projection (or only `name`) has passed the last of `writes` whose
   * event types it handles; a projection that handles none of them is not waited for.
   */
  async waitForWrites(writes: { position: bigint; types: string[] }[], timeoutMs: number, name?: string): Promise<boolean> {
    const reached = await Promise.all(
      this.workers
        .filter((worker) => name === undefined || worker.projection.name === name)
        .map((worker) => {
          const handled = writes.filter((write) => write.types.some((type) => handles(worker.projection, type)));
          const target = handled.reduce((max, write) => (write.position > max ? write.position : max), 0n);
          return target === 0n ? true : worker.waiters.wait(target, timeoutMs);
        }),
    );
    return reached.every(Boolean);
  }
}

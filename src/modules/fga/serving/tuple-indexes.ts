import type { Logger } from 'pino';
import type { Pool } from '../../../platform/db/pool.ts';
import type { EventStore, RecordedEvent, Subscription } from '../../../platform/eventstore/port.ts';
import { PositionWaiters } from '../../../platform/projections/position-waiters.ts';
import { MemoryTupleStore } from '../engine/memory-tuple-store.ts';
import { FGA_MODEL_EVENT_TYPES } from '../models/events.ts';
import type { TupleSet } from '../tuples/decider.ts';
import { isTupleEventType, tupleListsOf } from '../tuples/events.ts';
import { readTupleSnapshot } from './tuple-snapshot.ts';

const GAP_BATCH = 1000;

interface TenantView {
  store: MemoryTupleStore;
  /** Events at or below this position are already in the snapshot the view was loaded from. */
  snapshotAt: bigint;
  /** The tenant's tuple events seen while the snapshot loads (null once the view is live). */
  pending: RecordedEvent[] | null;
}

// Writes before deletes, as the event records them; no object per change (a bulk event holds 100 or more).
function applyTupleEvent(store: MemoryTupleStore, event: RecordedEvent): void {
  const { writes, deletes } = tupleListsOf(event);
  for (const tuple of writes) store.add(tuple);
  for (const tuple of deletes) store.remove(tuple);
}

const isTupleEvent = (event: RecordedEvent): boolean => isTupleEventType(event.type);

/**
 * One in-memory tuple index per tenant, kept current by following the global event log, so every
 * service instance answers checks from memory and sees every instance's writes.
 *
 * One subscription serves every tenant. A tenant's index is built on first use from the tuples
 * read model together with the position it reflects (the fga-history projection's checkpoint): log events
 * up to that position are skipped, events the follower saw meanwhile are replayed after the
 * snapshot, and a snapshot older than the follower is completed from the log. Model events on the
 * log invalidate the tenant's cached model (`onModelEvent`). `position` is the last log position
 * applied: a reader that waits for position P sees every write up to P (the consistency token).
 */
export class TupleIndexes {
  readonly position = new PositionWaiters();
  private readonly views = new Map<string, { view: TenantView; ready: Promise<MemoryTupleStore> }>();
  private subscription: Subscription | null = null;
  private started = false;

  constructor(
    private readonly deps: { store: EventStore; pool: Pool; logger: Logger; onModelEvent: (tenant: string) => void },
  ) {}

  /**
   * Follows the log from its head (anything older reaches a tenant through its snapshot), or
   * after a stop from where it stopped, so the loaded tenants miss nothing.
   */
  async start(): Promise<void> {
    const from = this.started ? this.position.current : await this.deps.store.headPosition();
    this.started = true;
    this.position.advance(from);
    this.subscription = this.deps.store.subscribeToAll({
      after: from,
      batchSize: 1000,
      onEvents: async (events) => {
        for (const event of events) this.follow(event);
        this.position.advance(events.at(-1)!.position);
      },
      onError: (error) => this.deps.logger.error({ err: error }, 'fga index: reading the event log failed; retrying'),
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    this.subscription = null;
  }

  /** Whether every event up to `position` is applied, waiting at most `timeoutMs`. */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    return this.position.wait(position, timeoutMs);
  }

  /** The tenant's tuples as the index holds them now (live), with the log position they reflect: what tuple writes are decided on. */
  async current(tenant: string): Promise<{ tuples: TupleSet; position: bigint }> {
    const store = await this.storeOf(tenant);
    return { tuples: { has: (tuple) => store.hasTuple(tuple) }, position: this.position.current };
  }

  /** The tenant's index, loaded on first use. */
  storeOf(tenant: string): Promise<MemoryTupleStore> {
    return (this.views.get(tenant) ?? this.load(tenant)).ready;
  }

  /** As `storeOf`, without a promise once the tenant's index is live (every check asks). */
  loadedStoreOf(tenant: string): MemoryTupleStore | Promise<MemoryTupleStore> {
    const loading = this.views.get(tenant) ?? this.load(tenant);
    return loading.view.pending === null ? loading.view.store : loading.ready;
  }

  private follow(event: RecordedEvent): void {
    const tenant = event.metadata.tenantId;
    if (FGA_MODEL_EVENT_TYPES.has(event.type)) this.deps.onModelEvent(tenant);
    if (!isTupleEvent(event)) return;
    const view = this.views.get(tenant)?.view;
    if (!view) return;
    if (view.pending) view.pending.push(event);
    else if (event.position > view.snapshotAt) applyTupleEvent(view.store, event);
  }

  private load(tenant: string): { view: TenantView; ready: Promise<MemoryTupleStore> } {
    // Synchronous with registering the view: every event after `followedFrom` lands in `pending`.
    const followedFrom = this.position.current;
    const view: TenantView = { store: new MemoryTupleStore(), snapshotAt: 0n, pending: [] };
    const loading = { view, ready: this.fill(tenant, view, followedFrom) };
    loading.ready.catch((error: unknown) => {
      if (this.views.get(tenant) === loading) this.views.delete(tenant);
      this.deps.logger.error({ err: error, tenant }, 'fga index: loading the tenant failed');
    });
    this.views.set(tenant, loading);
    return loading;
  }

  private async fill(tenant: string, view: TenantView, followedFrom: bigint): Promise<MemoryTupleStore> {
    const loadingSince = performance.now();
    const snapshotAt = await readTupleSnapshot(this.deps.pool, tenant, (tuple) => view.store.add(tuple));
    // The projection lags behind the follower: the events in between come from the log.
    for (let after = snapshotAt; after < followedFrom; ) {
      const events = await this.deps.store.readAll(after, GAP_BATCH);
      if (events.length === 0) break;
      for (const event of events) {
        if (event.position <= followedFrom && event.metadata.tenantId === tenant && isTupleEvent(event)) applyTupleEvent(view.store, event);
      }
      after = events.at(-1)!.position;
    }
    for (const event of view.pending!) if (event.position > snapshotAt) applyTupleEvent(view.store, event);
    view.snapshotAt = snapshotAt;
    view.pending = null;
    this.deps.logger.info({ tenant, tuples: view.store.size, ms: Math.round(performance.now() - loadingSince) }, 'fga index: tenant loaded');
    return view.store;
  }
}

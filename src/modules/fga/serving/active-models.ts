import type { Clock } from '../../../platform/clock.ts';
import { fold } from '../../../platform/commands/decider.ts';
import type { EventStore, RecordedEvent } from '../../../platform/eventstore/port.ts';
import { LoadingCache } from '../../../platform/projections/read-model-cache.ts';
import { TypeSystem } from '../typesystem.ts';
import { activeModel, modelDecider } from '../models/decider.ts';
import { modelsStreamId, type FgaModelEvent } from '../models/events.ts';

export interface ActiveModel {
  modelId: string;
  version: number;
  typesystem: TypeSystem;
}

/** The spec's model cache lifetime; events on the log normally invalidate an entry long before. */
export const MODEL_CACHE_TTL_MS = 5 * 60 * 1000;
const PAST_MODELS_KEPT = 256;
/** Far more tenants than one instance serves at once; the oldest loaded entry goes first. */
const MAX_TENANTS = 10_000;

interface Entry {
  /** The tenant's models stream, which asOf queries fold up to their instant. */
  events: RecordedEvent[];
  model: ActiveModel | null;
}

/**
 * The active model of each tenant, compiled once. An entry is dropped when the log shows a model
 * event of its tenant (activation, update, deletion: see TupleIndexes) and at the latest after
 * MODEL_CACHE_TTL_MS. Entries load from the tenant's models stream, the write side's own state, so a
 * reload after an invalidation never sees a read model that lags behind the event.
 */
export class ActiveModels {
  private readonly cache: LoadingCache<Entry>;
  /** Models as they stood at past instants (asOf queries), oldest entry dropped first. */
  private readonly past = new Map<string, ActiveModel | null>();

  constructor(private readonly deps: { store: EventStore; clock: Clock }) {
    this.cache = new LoadingCache((tenant) => this.load(tenant), {
      maxEntries: MAX_TENANTS,
      ttlMs: MODEL_CACHE_TTL_MS,
      now: () => deps.clock.now().getTime(),
    });
  }

  async get(tenant: string): Promise<ActiveModel | null> {
    return (await this.cache.get(tenant)).model;
  }

  /** As `get`, without a promise once the tenant's models are loaded (every check asks). */
  current(tenant: string): ActiveModel | null | Promise<ActiveModel | null> {
    const entry = this.cache.current(tenant);
    return entry instanceof Promise ? entry.then(({ model }) => model) : entry.model;
  }

  /** Drops the tenant's entry; a load still running keeps answering only the requests already waiting for it. */
  invalidate(tenant: string): void {
    this.cache.invalidate(tenant);
  }

  /**
   * The model that was active at `instant`: the models stream (cached and invalidated like the
   * active model) folded up to it, inclusive. The compiled model is kept per tenant and number of
   * events folded, which names one state for good.
   */
  async at(tenant: string, instant: Date): Promise<ActiveModel | null> {
    const events = (await this.cache.get(tenant)).events.filter((event) => new Date(event.metadata.occurredAt) <= instant);
    const key = `${tenant}\u0000${events.length}`;
    const known = this.past.get(key);
    if (known !== undefined) return known;
    const model = compile(events);
    if (this.past.size >= PAST_MODELS_KEPT) this.past.delete(this.past.keys().next().value!);
    this.past.set(key, model);
    return model;
  }

  private async load(tenant: string): Promise<Entry> {
    const events = await this.deps.store.readStream(modelsStreamId(tenant));
    return { events, model: compile(events) };
  }
}

function compile(events: RecordedEvent[]): ActiveModel | null {
  const active = activeModel(fold(modelDecider, events as unknown as FgaModelEvent[]));
  if (!active) return null;
  return { modelId: active.modelId, version: active.version, typesystem: TypeSystem.fromSchema(active.schema) };
}

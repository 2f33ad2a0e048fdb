import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from 'pino';
import type { EventStore } from '../eventstore/port.ts';
import { lastPosition } from '../commands/handle-command.ts';
import type { ProjectionRunner } from './runner.ts';

/** One append of a request: where it ended in the global log and which event types it wrote. */
export interface Write {
  position: bigint;
  types: string[];
}

/** The appends made while serving one request. */
export class WriteLog {
  readonly writes: Write[] = [];
}

const currentLog = new AsyncLocalStorage<WriteLog>();
/** Requests recording their writes right now. */
let recording = 0;

/**
 * Runs `work` (a route handler) so that every append it causes, on any path, is logged in `log`.
 * On node 20 an AsyncLocalStorage in use runs a promise hook for every promise of the process
 * (about a tenth of a cheap request's CPU), so the storage is disabled whenever no request is
 * recording: requests that append nothing (queries) then pay no hook at all.
 */
export async function recordingWrites<T>(log: WriteLog, work: () => Promise<T>): Promise<T> {
  recording += 1;
  try {
    return await currentLog.run(log, work);
  } finally {
    recording -= 1;
    if (recording === 0) currentLog.disable();
  }
}

/** Logs an append in the current request's write log; for a write made on its behalf elsewhere (grouped with other requests'). */
export const reportWrite = (write: Write): void => {
  currentLog.getStore()?.writes.push(write);
};

/** Runs `work` outside any request, so its appends land in no request's write log (each request reports its own). */
export const outsideRequests = <T>(work: () => T): T => currentLog.exit(work);

/**
 * The event store as the modules see it: each append also lands in the write log of the request
 * that caused it (if any). Every append path goes through the store, so none can forget to report.
 */
export function reportingAppends(store: EventStore): EventStore {
  const report = (position: bigint, types: string[]) => reportWrite({ position, types });
  return {
    async append(streamId, events, expectedRevision) {
      const result = await store.append(streamId, events, expectedRevision);
      report(result.position, events.map((e) => e.type));
      return result;
    },
    async appendMulti(appends) {
      const results = await store.appendMulti(appends);
      report(lastPosition(results), appends.flatMap((a) => a.events.map((e) => e.type)));
      return results;
    },
    readStream: (streamId, fromRevision) => store.readStream(streamId, fromRevision),
    readStreams: (streamIds, fromRevisions) => store.readStreams(streamIds, fromRevisions),
    readAll: (after, limit) => store.readAll(after, limit),
    readTenantEvents: (query, limit) => store.readTenantEvents(query, limit),
    tenantAt: (position) => store.tenantAt(position),
    subscribeToAll: (options) => store.subscribeToAll(options),
    headPosition: () => store.headPosition(),
    lastWrittenPosition: () => store.lastWrittenPosition(),
    close: () => store.close(),
  };
}

/**
 * Read-your-writes without lists of names: which projections a write concerns is derived from the
 * projections' handler tables. Waits are bounded (READ_YOUR_WRITES_TIMEOUT_MS); past the bound the
 * answer goes out anyway, and the lag is logged.
 *
 * Writes of `deferredTypes` (facts the writer's answer does not depend on, such as a session's
 * activity times) do not hold the answer back: this instance remembers the highest position of
 * each, and every later query of a read model that projects them waits for it first, so the next
 * read through this instance still sees them.
 */
export class ReadYourWrites {
  private readonly deferred = new Map<string, bigint>();
  /** Bumped with every deferred position; per read model, the count it was last seen caught up with. */
  private deferredCount = 0;
  private readonly caughtUpWith = new Map<string, number>();
  private readonly projected = new Map<string, Map<string, boolean>>();

  constructor(
    private readonly runner: ProjectionRunner,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
    private readonly deferredTypes: ReadonlySet<string> = new Set(),
  ) {}

  /** Before a route answers: every projection that handles a type the request appended and does not defer (false: not in time). */
  settle(log: WriteLog): Promise<boolean> {
    const awaited: Write[] = [];
    for (const write of log.writes) {
      const waitFor = write.types.filter((type) => !this.deferredTypes.has(type));
      for (const type of write.types) if (this.deferredTypes.has(type)) this.defer(type, write.position);
      if (waitFor.length) awaited.push({ position: write.position, types: waitFor });
    }
    return this.wait(awaited);
  }

  /**
   * Before a query of `readModel` runs: that projection has passed the request's writes and the
   * deferred ones, of the types it projects. Nothing to wait for (undefined, no promise) when none
   * of them concerns it: every authenticated request's tenant and role lookups come here, and so do
   * the user, role and settings lookups of a refresh grant, which wrote a SessionRefreshed.
   */
  readModel(readModel: string): Promise<void> | undefined {
    const count = this.deferredCount;
    let writes: Write[] | null = null;
    const logged = currentLog.getStore()?.writes;
    if (logged) for (const write of logged) if (this.projectsAny(readModel, write.types)) (writes ??= []).push(write);
    if (this.caughtUpWith.get(readModel) !== count) {
      for (const [type, position] of this.deferred) if (this.projects(readModel, type)) (writes ??= []).push({ position, types: [type] });
    }
    if (!writes) {
      if (this.deferred.size > 0) this.caughtUpWith.set(readModel, count);
      return undefined;
    }
    return this.wait(writes, readModel).then((caughtUp) => {
      if (caughtUp && this.deferred.size > 0) this.caughtUpWith.set(readModel, count);
    });
  }

  private projectsAny(readModel: string, types: readonly string[]): boolean {
    for (const type of types) if (this.projects(readModel, type)) return true;
    return false;
  }

  /** Whether `readModel`'s projection handles events of `type` (remembered: handler tables do not change). */
  private projects(readModel: string, type: string): boolean {
    let types = this.projected.get(readModel);
    if (!types) this.projected.set(readModel, (types = new Map()));
    let handled = types.get(type);
    if (handled === undefined) types.set(type, (handled = this.runner.projects(readModel, type)));
    return handled;
  }

  private defer(type: string, position: bigint): void {
    if (position > (this.deferred.get(type) ?? 0n)) {
      this.deferred.set(type, position);
      this.deferredCount += 1;
    }
  }

  private async wait(writes: Write[], readModel?: string): Promise<boolean> {
    if (writes.length === 0) return true;
    const caughtUp = await this.runner.waitForWrites(writes, this.timeoutMs, readModel);
    if (!caughtUp) this.logger.warn({ position: String(lastPosition(writes)), readModel }, 'read models lag behind a write');
    return caughtUp;
  }
}

type Queries = Record<string, (...args: never[]) => unknown>;

/**
 * Queries declared with the read model they read: inside a request that has written, each first
 * waits (bounded) until that projection has passed the request's writes. A query that answers
 * without a promise (a cached value already loaded) is answered so when there is nothing to wait
 * for; one that throws answers a rejected promise, as an async query would.
 */
export function readModelQueries<Q extends Queries>(readModel: string, consistency: ReadYourWrites, queries: Q): Q {
  const waited = Object.entries(queries).map(([name, query]) => [
    name,
    (...args: never[]) => {
      const waiting = consistency.readModel(readModel);
      if (waiting) return waiting.then(() => query.apply(queries, args));
      try {
        return query.apply(queries, args);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  ]);
  return Object.fromEntries(waited) as Q;
}

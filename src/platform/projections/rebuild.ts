import type { Logger } from 'pino';
import pg from 'pg';
import { withTransaction, type Pool } from '../db/pool.ts';
import type { EventStore } from '../eventstore/port.ts';
import { SharedLogReader } from '../eventstore/shared-log-reader.ts';
import { ensureCheckpoint, lockCheckpoint, saveCheckpoint } from './checkpoints.ts';
import type { Projection } from './projection.ts';
import { ProjectionWorker } from './runner.ts';

/**
 * Empties a read model and replays the whole log into it. Running service instances notice the
 * checkpoint moving back and rewind too, so the rebuild is safe while the service runs.
 */
export async function rebuildProjection(
  projection: Projection,
  store: EventStore,
  pool: Pool,
  logger: Logger,
  timeoutMs = 600_000,
): Promise<void> {
  await ensureCheckpoint(pool, projection.name);
  await withTransaction(pool, async (tx) => {
    await lockCheckpoint(tx, projection.name);
    if (projection.tables.length > 0) {
      await tx.query(`truncate ${projection.tables.map((t) => pg.escapeIdentifier(t)).join(', ')}`);
    }
    await saveCheckpoint(tx, projection.name, 0n);
  });
  const head = await store.headPosition();
  const worker = new ProjectionWorker(projection, store, pool, logger);
  await worker.start();
  try {
    if (!(await worker.waiters.wait(head, timeoutMs))) throw new Error(`Rebuild of ${projection.name} timed out`);
  } finally {
    await worker.stop();
  }
}

/**
 * Rebuilds the projections together (the operator command) through one shared reader, so the log
 * is read and decoded once for all of them rather than once each; reports each one's duration.
 */
export async function rebuildProjections(
  projections: Projection[],
  store: EventStore,
  pool: Pool,
  logger: Logger,
  onRebuilt: (name: string, ms: number) => void = () => undefined,
): Promise<void> {
  // Not closed here: it would close `store`; its tail stops when the last worker leaves it.
  const shared = new SharedLogReader(store);
  await Promise.all(
    projections.map(async (projection) => {
      const started = Date.now();
      await rebuildProjection(projection, shared, pool, logger);
      onRebuilt(projection.name, Date.now() - started);
    }),
  );
}

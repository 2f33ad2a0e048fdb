import type { Queryable } from '../db/pool.ts';
import type { Metrics } from '../metrics.ts';
import type { ProjectionRunner } from './runner.ts';

/** Counting past this many events behind would cost more than the number is worth. */
const LAG_COUNT_CAP = 100_000;

/** Exports, per projection, how many visible events it has not applied yet. */
export function registerProjectionLag(metrics: Metrics, runner: ProjectionRunner, db: Queryable): void {
  metrics.gauge('iam_projection_lag_events', 'Events in the global log not yet applied by a projection', ['projection'], async (gauge) => {
    for (const worker of runner.workers) {
      const { rows } = await db.query<{ behind: string }>(
        `select count(*) as behind from (
           select 1 from events where position > $1 and position < events_visible_bound() limit $2
         ) pending`,
        [worker.waiters.current.toString(), LAG_COUNT_CAP],
      );
      gauge.set({ projection: worker.projection.name }, Number(rows[0]?.behind ?? 0));
    }
  });
}

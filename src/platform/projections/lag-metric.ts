import type { Queryable } from '../db/pool.ts';
import type { Metrics } from '../metrics.ts';
import type { ReactionRunner } from '../reactions/runner.ts';
import type { ProjectionRunner } from './runner.ts';

/** Counting past this many events behind would cost more than the number is worth. */
const LAG_COUNT_CAP = 100_000;

/** A gauge of how many visible events each follower of the log (by label) has not handled yet. */
function registerLogLag(
  metrics: Metrics,
  db: Queryable,
  gauge: { name: string; help: string; label: string },
  positions: () => [follower: string, position: bigint][],
): void {
  metrics.gauge(gauge.name, gauge.help, [gauge.label], async (metric) => {
    for (const [follower, position] of positions()) {
      const { rows } = await db.query<{ behind: string }>(
        `select count(*) as behind from (
           select 1 from events where position > $1 and position < events_visible_bound() limit $2
         ) pending`,
        [position.toString(), LAG_COUNT_CAP],
      );
      metric.set({ [gauge.label]: follower }, Number(rows[0]?.behind ?? 0));
    }
  });
}

/** Exports, per projection, how many visible events it has not applied yet. */
export function registerProjectionLag(metrics: Metrics, runner: ProjectionRunner, db: Queryable): void {
  const gauge = { name: 'iam_projection_lag_events', help: 'Events in the global log not yet applied by a projection', label: 'projection' };
  registerLogLag(metrics, db, gauge, () => runner.workers.map((w) => [w.projection.name, w.waiters.current]));
}

/** Exports, per reaction, how many visible events it has not reacted to yet (a failing one keeps growing). */
export function registerReactionLag(metrics: Metrics, runner: ReactionRunner, db: Queryable): void {
  const gauge = { name: 'iam_reaction_lag_events', help: 'Events in the global log not yet handled by a reaction', label: 'reaction' };
  registerLogLag(metrics, db, gauge, () => runner.workers.map((w) => [w.reaction.name, w.waiters.current]));
}

import type { Pool } from '../db/pool.ts';
import { checkpointedBatches, type CheckpointedWork } from './checkpoints.ts';

interface Member extends CheckpointedWork<unknown> {
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

/**
 * Projection batches that arrive in the same turn of the event loop (the shared log reader hands a
 * new batch to every projection at once) applied together: one transaction per group, opened with
 * every member's checkpoint locked and closed by moving them all, so a batch for twelve read models
 * costs their handlers' statements plus two round trips, not twelve transactions. Nobody waits for
 * company: a group leaves at the end of the turn it was formed in. Each member still succeeds or
 * fails on its own: if the group's transaction fails, every member is applied again in a
 * transaction of its own, so only the failing one fails.
 */
export class BatchGroups {
  private queue: Member[] = [];
  private scheduled = false;

  constructor(
    private readonly pool: Pool,
    /** Groups a turn's batches are split into, written side by side (PostgreSQL's cores). */
    private readonly parallelGroups = 2,
  ) {}

  apply<T>(name: string, work: CheckpointedWork<T>['work']): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ name, work, resolve: resolve as (result: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const members = this.queue;
    this.queue = [];
    // A projection twice in a turn (two workers of one read model) must not read one checkpoint for both.
    const unique = new Set(members.map((m) => m.name)).size === members.length;
    const count = unique ? Math.min(this.parallelGroups, members.length) : members.length;
    // Dealt out in turn: read models next to each other in the list often handle the same (costly) events.
    for (let group = 0; group < count; group += 1) void this.write(members.filter((_, i) => i % count === group));
  }

  private async write(group: Member[]): Promise<void> {
    if (group.length > 1) {
      const results = await checkpointedBatches(this.pool, group).catch(() => null);
      if (results) return group.forEach((member, i) => member.resolve(results[i]));
    }
    for (const member of group) checkpointedBatches(this.pool, [member]).then(([result]) => member.resolve(result), member.reject);
  }
}

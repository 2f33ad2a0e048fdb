import { pipelinedPool, type Pool } from '../db/pool.ts';
import { checkpointedBatches, type CheckpointedWork } from './checkpoints.ts';

interface Member extends CheckpointedWork<unknown> {
  /** Events in the batch (Infinity when unknown). */
  size: number;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

/** A turn whose batches hold this many events or fewer in all is written as one group. */
export const SMALL_TURN_EVENTS = 32;

/**
 * Projection batches that arrive in the same turn of the event loop (the shared log reader hands a
 * new batch to every projection at once) applied together: one transaction per group, opened with
 * every member's checkpoint locked and closed by moving them all, so a batch for twelve read models
 * costs their handlers' statements plus two round trips, not twelve transactions. Nobody waits for
 * company: a group leaves at the end of the turn it was formed in. Each read model keeps its group
 * (dealt out in the list's order): the members of a group commit together and so come back in one
 * turn. Dealing each turn's members out afresh split a busy group of six into three and three, then
 * two and one, until under load most batches went alone (bench:eventstore: 26 to 51 projection
 * transactions per 1,000 events before, 11 to 16 with fixed groups). Each member still succeeds or
 * fails on its own: if the group's transaction fails, every member is applied again in a
 * transaction of its own, so only the failing one fails. A turn of small batches (a login's two
 * events for three read models) is one group whatever the members' lanes: writing a few rows side
 * by side saves no time, and a second transaction costs two more statements on both sides.
 */
export class BatchGroups {
  private queue: Member[] = [];
  private scheduled = false;
  private readonly lanes = new Map<string, number>();
  /** Pipelined connections of the groups' own (checkpointedBatches runs a group's batches side by side); opened on first use. */
  private pipelined: Pool | null = null;
  /** Group transactions begun (bench:eventstore reports them per 1,000 events). */
  transactions = 0;

  constructor(
    private readonly pool: Pool,
    /** The read models in the order of the service's list: each gets its group now, whatever order they come in. */
    names: readonly string[] = [],
    /** Groups a turn's batches are split into, written side by side (PostgreSQL's cores). */
    private readonly parallelGroups = 2,
  ) {
    for (const name of names) this.laneOf(name);
  }

  /**
   * `expected`: the checkpoint the batch expects (see checkpointedBatches); it then starts without
   * waiting to read it. `size`: the batch's events, which decides whether the turn is small.
   * `writes`: the batch as statements (see checkpointedBatches), for a group sent whole.
   */
  apply<T>(name: string, work: CheckpointedWork<T>['work'], expected?: bigint, size = Number.POSITIVE_INFINITY, writes?: CheckpointedWork<T>['writes']): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        name,
        work,
        size,
        ...(expected === undefined ? {} : { expected }),
        ...(writes === undefined ? {} : { writes }),
        resolve: resolve as (result: unknown) => void,
        reject,
      });
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
    if (new Set(members.map((m) => m.name)).size !== members.length) return members.forEach((member) => void this.write([member]));
    if (members.reduce((events, member) => events + member.size, 0) <= SMALL_TURN_EVENTS) return void this.write(members);
    const groups = new Map<number, Member[]>();
    for (const member of members) {
      const lane = this.laneOf(member.name);
      const group = groups.get(lane);
      if (group) group.push(member);
      else groups.set(lane, [member]);
    }
    for (const group of groups.values()) void this.write(group);
  }

  /** Dealt out in turn: read models next to each other in the list often handle the same (costly) events. */
  private laneOf(name: string): number {
    let lane = this.lanes.get(name);
    if (lane === undefined) {
      lane = this.lanes.size % this.parallelGroups;
      this.lanes.set(name, lane);
    }
    return lane;
  }

  /** Optimistically together; after a failure (a batch's, or a checkpoint that moved), each alone on the checkpoint it finds. */
  private async write(group: Member[]): Promise<void> {
    const results = await this.commit(group, true).catch(() => null);
    if (results) return group.forEach((member, i) => member.resolve(results[i]));
    for (const member of group) this.commit([member], false).then(([result]) => member.resolve(result), member.reject);
  }

  private commit(members: Member[], optimistic: boolean): Promise<unknown[]> {
    this.transactions += 1;
    // Idle connections close on their own and never keep the process alive: workers made outside a runner need no close.
    this.pipelined ??= pipelinedPool(this.pool, this.parallelGroups * 2);
    return checkpointedBatches(this.pipelined, members, optimistic);
  }

  /** Closes the pipelined connections (a later batch opens them again). */
  async close(): Promise<void> {
    const pipelined = this.pipelined;
    this.pipelined = null;
    await pipelined?.end();
  }
}

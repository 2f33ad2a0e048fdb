/** A worker that follows the global log from a checkpoint of its own. */
export interface LogFollower {
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly running: boolean;
}

/** Starts and stops a set of followers together (the projections, the reactions). */
export class FollowerGroup<Follower extends LogFollower> {
  constructor(readonly workers: Follower[]) {}

  async start(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop()));
  }

  get running(): boolean {
    return this.workers.every((w) => w.running);
  }
}

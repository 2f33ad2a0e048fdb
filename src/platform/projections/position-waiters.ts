/** Lets callers wait until a moving position passes a target, with a bounded wait. */
export class PositionWaiters {
  private position = 0n;
  private waiters = new Set<{ target: bigint; resolve: (reached: boolean) => void }>();

  get current(): bigint {
    return this.position;
  }

  advance(position: bigint): void {
    if (position <= this.position) return;
    this.position = position;
    for (const waiter of [...this.waiters]) {
      if (waiter.target <= position) {
        this.waiters.delete(waiter);
        waiter.resolve(true);
      }
    }
  }

  /** Resets the position backwards (a rebuild started). */
  reset(position: bigint): void {
    this.position = position;
  }

  wait(target: bigint, timeoutMs: number): Promise<boolean> {
    if (target <= this.position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        target,
        resolve: (reached: boolean) => {
          clearTimeout(timer);
          resolve(reached);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      this.waiters.add(waiter);
    });
  }
}

import type { Inbox } from './inbox.ts';

/** The Inbox in memory, for tests and the embedded setup; forgets everything on restart. */
export class InMemoryInbox implements Inbox {
  private readonly applied = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();

  async runOnce(groupId: string, eventId: string, effect: (tx: void) => Promise<void>): Promise<boolean> {
    const key = JSON.stringify([groupId, eventId]);
    // Like a unique key in a transaction: a concurrent duplicate waits for the first run to settle.
    for (let pending = this.running.get(key); pending; pending = this.running.get(key)) {
      await pending.catch(() => undefined);
    }
    if (this.applied.has(key)) return false;
    const run = effect();
    this.running.set(key, run);
    try {
      await run;
      this.applied.add(key);
      return true;
    } finally {
      this.running.delete(key);
    }
  }
}

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lowerThreadPoolPriority } from '../../src/platform/thread-pool-priority.ts';

/** A thread's nice value, from /proc (the 19th field of its stat line). */
const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);

describe.skipIf(process.platform !== 'linux')('lowerThreadPoolPriority', () => {
  it("sets the nice value of every libuv pool thread, not the calling thread's", async () => {
    const callerBefore = niceOf(readFileSync('/proc/thread-self/stat', 'utf8'));
    const ids = await lowerThreadPoolPriority(Math.min(19, callerBefore + 3));
    expect(ids).toHaveLength(Number(process.env.UV_THREADPOOL_SIZE ?? 4));
    for (const id of ids) {
      expect(id).not.toBe(process.pid);
      expect(niceOf(readFileSync(`/proc/self/task/${id}/stat`, 'utf8'))).toBe(Math.min(19, callerBefore + 3));
    }
    expect(niceOf(readFileSync('/proc/thread-self/stat', 'utf8'))).toBe(callerBefore);
  });

  it('never raises a priority: threads already at the value or below it are left as they are', async () => {
    const caller = niceOf(readFileSync('/proc/thread-self/stat', 'utf8'));
    const lowered = Math.min(19, caller + 5);
    const pool = await lowerThreadPoolPriority(lowered);
    expect(pool).toHaveLength(Number(process.env.UV_THREADPOOL_SIZE ?? 4));
    expect(await lowerThreadPoolPriority(lowered - 2)).toEqual([]);
    expect(await lowerThreadPoolPriority(caller - 1)).toEqual([]);
    for (const id of pool) expect(niceOf(readFileSync(`/proc/self/task/${id}/stat`, 'utf8'))).toBe(lowered);
  });
});

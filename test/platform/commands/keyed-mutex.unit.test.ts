import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../../src/platform/commands/keyed-mutex.ts';

describe('keyed mutex', () => {
  it('runs tasks of one key one at a time in order, other keys in parallel, and survives failures', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const task = (name: string, ms: number, fail = false) => async () => {
      log.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      log.push(`end ${name}`);
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([
      mutex.run('a', task('a1', 20, true)),
      mutex.run('a', task('a2', 1)),
      mutex.run('b', task('b1', 5)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(log.indexOf('end a1')).toBeLessThan(log.indexOf('start a2'));
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'));
  });
});

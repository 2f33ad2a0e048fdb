import { describe, expect, it } from 'vitest';
import { GroupCommitter } from '../../../src/platform/eventstore/group-commit.ts';

/** A committer over numbers whose writes the test releases by hand, recording each group. */
function harness(maxInFlight: number, maxWeight = 100) {
  const groups: number[][] = [];
  const pending: (() => void)[] = [];
  const committer = new GroupCommitter<number, string>({
    maxInFlight,
    maxWeight,
    weigh: (n) => n,
    write: (requests) => {
      groups.push(requests);
      return new Promise((resolve) => pending.push(() => resolve(requests.map((n) => (n === 13 ? new Error('unlucky') : `ok ${n}`)))));
    },
  });
  const releaseAll = async () => {
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { committer, groups, releaseAll };
}

describe('group commit', () => {
  it('sends a lone request at once and groups those that arrive while a write is in flight', async () => {
    const { committer, groups, releaseAll } = harness(1);
    const results = [1, 2, 3, 4].map((n) => committer.submit(n));
    expect(groups).toEqual([[1]]);
    await releaseAll();
    expect(await Promise.all(results)).toEqual(['ok 1', 'ok 2', 'ok 3', 'ok 4']);
    expect(groups).toEqual([[1], [2, 3, 4]]);
  });

  it('settles each request on its own: one failure leaves the others of its group committed', async () => {
    const { committer, releaseAll } = harness(1);
    const results = Promise.allSettled([10, 12, 13, 14].map((n) => committer.submit(n)));
    await releaseAll();
    expect((await results).map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['ok 10', 'ok 12', 'unlucky', 'ok 14']);
  });

  it('keeps groups within the weight limit and writes up to maxInFlight groups at once', async () => {
    const { committer, groups, releaseAll } = harness(2, 10);
    const results = [1, 2, 6, 3, 4, 20].map((n) => committer.submit(n));
    expect(groups).toEqual([[1], [2]]);
    await releaseAll();
    await Promise.all(results);
    // 6 + 3 fit in 10, 4 does not join them; 20 alone exceeds the limit and still goes, by itself.
    expect(groups).toEqual([[1], [2], [6, 3], [4], [20]]);
  });
});

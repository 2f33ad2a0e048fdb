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
  /** Lets the event loop's turn end, so that the requests submitted in it leave. */
  const turnEnds = () => new Promise((resolve) => setImmediate(resolve));
  const releaseAll = async () => {
    await turnEnds();
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { committer, groups, releaseAll, turnEnds };
}

describe('group commit', () => {
  it("sends the requests of one turn together at the turn's end, and groups those that arrive while a write is in flight", async () => {
    const { committer, groups, releaseAll, turnEnds } = harness(1);
    const first = [1, 2].map((n) => committer.submit(n));
    expect(groups).toEqual([]);
    await turnEnds();
    expect(groups).toEqual([[1, 2]]);
    const second = [3, 4].map((n) => committer.submit(n));
    await turnEnds();
    const third = [5].map((n) => committer.submit(n));
    await releaseAll();
    expect(await Promise.all([...first, ...second, ...third])).toEqual(['ok 1', 'ok 2', 'ok 3', 'ok 4', 'ok 5']);
    expect(groups).toEqual([[1, 2], [3, 4, 5]]);
  });

  it('writes the requests of separate turns as separate groups while a write slot is free', async () => {
    const { committer, groups, releaseAll, turnEnds } = harness(4);
    const results = [];
    for (const n of [1, 2, 3]) {
      results.push(committer.submit(n));
      await turnEnds();
    }
    expect(groups).toEqual([[1], [2], [3]]);
    await releaseAll();
    await Promise.all(results);
  });

  it('settles each request on its own: one failure leaves the others of its group committed', async () => {
    const { committer, releaseAll } = harness(1);
    const results = Promise.allSettled([10, 12, 13, 14].map((n) => committer.submit(n)));
    await releaseAll();
    expect((await results).map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['ok 10', 'ok 12', 'unlucky', 'ok 14']);
  });

  it('keeps groups within the weight limit and writes up to maxInFlight groups at once', async () => {
    const { committer, groups, releaseAll, turnEnds } = harness(2, 10);
    const results = [1, 2, 6, 3, 4, 20].map((n) => committer.submit(n));
    await turnEnds();
    // 1 + 2 + 6 fit in 10 and 3 does not join them; 3 + 4 go second; the slots are then full.
    expect(groups).toEqual([[1, 2, 6], [3, 4]]);
    await releaseAll();
    await Promise.all(results);
    // 20 alone exceeds the limit and still goes, by itself.
    expect(groups).toEqual([[1, 2, 6], [3, 4], [20]]);
  });
});

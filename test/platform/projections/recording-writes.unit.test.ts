import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { recordingWrites, reportWrite, WriteLog } from '../../../src/platform/projections/read-your-writes.ts';

const write = (position: number) => ({ position: BigInt(position), types: [`T${position}`] });

/** The storage is on only while some request records; each request's appends land in its own log. */
describe('recordingWrites', () => {
  it('keeps logging a request that outlives another, and logs nothing once no request records', async () => {
    const [first, second] = [new WriteLog(), new WriteLog()];
    let finishSecond = () => {};
    const secondDone = recordingWrites(second, async () => {
      reportWrite(write(2));
      await new Promise<void>((resolve) => (finishSecond = resolve));
      await tick();
      reportWrite(write(4));
    });
    await recordingWrites(first, async () => {
      await tick();
      reportWrite(write(1));
    });
    // The first request has finished: the second still records, after its awaits too.
    await tick();
    reportWrite(write(3)); // outside any request
    finishSecond();
    await secondDone;
    reportWrite(write(5));
    expect(first.writes).toEqual([write(1)]);
    expect(second.writes).toEqual([write(2), write(4)]);
    // Recording again after the storage was off works as before.
    const third = new WriteLog();
    await recordingWrites(third, async () => {
      await tick();
      reportWrite(write(6));
    });
    expect(third.writes).toEqual([write(6)]);
  });

  it('answers a refusal after logging what the request wrote before it', async () => {
    const log = new WriteLog();
    await expect(
      recordingWrites(log, async () => {
        reportWrite(write(7));
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(log.writes).toEqual([write(7)]);
  });
});

import { percentile } from '../bench/support.ts';
import type { Ledger, Operation, Sample } from './load.ts';

export interface FaultWindow {
  name: 'service restart' | 'postgres kill -9' | 'kafka restart';
  /** ms since the run began; `end` is when the service answered ready again, plus a grace. */
  start: number;
  end: number;
  /** What the fault showed (readiness went 503, recovery time ...). */
  notes: string[];
}

export interface RssSample {
  at: number;
  serviceKiB: number;
  postgresKiB: number;
  /** The V8 heap in use: growth here is retained objects, not the allocator keeping pages. */
  heapUsedKiB: number;
}

export interface Criteria {
  p99BoundMs: number;
  maxRssGrowth: number;
  /** RSS is compared between [warmedUpAt, baselineUntil) and the last tenth of the run. */
  warmedUpAt: number;
  baselineUntil: number;
  runMs: number;
}

const overlaps = (sample: Sample, window: FaultWindow) => sample.at <= window.end && sample.at + sample.ms >= window.start;
const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

/** Prints the figures and answers the failed criteria (none: the run passed). */
export function report(input: { ledger: Ledger; faults: FaultWindow[]; rss: RssSample[]; unverified: string[]; criteria: Criteria; extraFailures: string[] }): string[] {
  const { ledger, faults, rss, unverified, criteria } = input;
  const failures = [...input.extraFailures];
  const windowOf = (sample: Sample) => faults.find((fault) => overlaps(sample, fault));

  // Answers by class, inside and outside the fault windows.
  const counts = { ok: 0, clientErrors: 0, serverErrorsOutside: 0, unavailableInWindows: 0, otherServerErrorsInWindows: 0, noAnswerInRestart: 0, noAnswerElsewhere: 0 };
  const clientErrors = new Map<string, number>();
  for (const sample of ledger.samples) {
    const window = windowOf(sample);
    if (sample.status >= 200 && sample.status < 400) counts.ok += 1;
    else if (sample.status >= 400 && sample.status < 500) {
      counts.clientErrors += 1;
      const key = `${sample.op} ${sample.status}`;
      clientErrors.set(key, (clientErrors.get(key) ?? 0) + 1);
    } else if (sample.status === 0) {
      if (window?.name === 'service restart') counts.noAnswerInRestart += 1;
      else counts.noAnswerElsewhere += 1;
    } else if (!window) counts.serverErrorsOutside += 1;
    else if (sample.status === 503) counts.unavailableInWindows += 1;
    else counts.otherServerErrorsInWindows += 1;
  }
  console.log(`\nrequests: ${ledger.samples.length}`, counts);
  if (clientErrors.size) console.log('4xx by operation:', Object.fromEntries(clientErrors));
  if (counts.serverErrorsOutside) failures.push(`${counts.serverErrorsOutside} 5xx outside the fault windows`);
  if (counts.otherServerErrorsInWindows) failures.push(`${counts.otherServerErrorsInWindows} 5xx other than 503 during faults`);
  if (counts.noAnswerElsewhere) failures.push(`${counts.noAnswerElsewhere} requests without an answer outside the service restart`);

  console.log('\nfaults:');
  for (const fault of faults) console.log(`  ${fault.name} at ${(fault.start / 1000).toFixed(1)} s, window ${((fault.end - fault.start) / 1000).toFixed(1)} s: ${fault.notes.join('; ')}`);

  // Latency per operation per minute, outside the fault windows.
  const minutes = Math.ceil(criteria.runMs / 60_000);
  const ops = [...new Set(ledger.samples.map((s) => s.op))].sort() as Operation[];
  console.log(`\nlatency outside fault windows, p50/p99 ms (count) per minute; p99 judged from minute ${Math.ceil(criteria.warmedUpAt / 60_000) + 1}:`);
  console.log(['operation'.padEnd(12), ...Array.from({ length: minutes }, (_, m) => `min ${m + 1}`.padEnd(18))].join(' '));
  for (const op of ops) {
    const cells: string[] = [];
    for (let minute = 0; minute < minutes; minute += 1) {
      const latencies = ledger.samples
        .filter((s) => s.op === op && s.status > 0 && Math.floor(s.at / 60_000) === minute && !windowOf(s))
        .map((s) => s.ms)
        .sort((a, b) => a - b);
      if (latencies.length === 0) {
        cells.push('-'.padEnd(18));
        continue;
      }
      const p99 = percentile(latencies, 99);
      cells.push(`${percentile(latencies, 50).toFixed(0)}/${p99.toFixed(0)} (${latencies.length})`.padEnd(18));
      // Minutes before the warm-up ended (a process just started: cold JIT, empty caches) are shown, not judged.
      if (p99 > criteria.p99BoundMs && minute * 60_000 >= criteria.warmedUpAt) failures.push(`${op} p99 ${p99.toFixed(0)} ms in minute ${minute + 1} (bound ${criteria.p99BoundMs} ms)`);
    }
    console.log([op.padEnd(12), ...cells].join(' '));
  }

  // Memory: the service's RSS after warm-up against its RSS at the end (one process lifetime).
  const between = (from: number, to: number) => rss.filter((s) => s.at >= from && s.at < to);
  const baseline = between(criteria.warmedUpAt, criteria.baselineUntil);
  const tail = between(criteria.runMs * 0.9, Number.POSITIVE_INFINITY);
  if (baseline.length && tail.length) {
    const [before, after] = [median(baseline.map((s) => s.serviceKiB)), median(tail.map((s) => s.serviceKiB))];
    const [pgBefore, pgAfter] = [median(baseline.map((s) => s.postgresKiB)), median(tail.map((s) => s.postgresKiB))];
    const growth = (after - before) / before;
    console.log(`\nservice RSS: ${(before / 1024).toFixed(0)} MiB after warm-up -> ${(after / 1024).toFixed(0)} MiB at the end (${(growth * 100).toFixed(1)} %); peak ${(Math.max(...rss.map((s) => s.serviceKiB)) / 1024).toFixed(0)} MiB`);
    const [heapBefore, heapAfter] = [median(baseline.map((s) => s.heapUsedKiB).filter(Number.isFinite)), median(tail.map((s) => s.heapUsedKiB).filter(Number.isFinite))];
    console.log(`service heap in use: ${(heapBefore / 1024).toFixed(0)} -> ${(heapAfter / 1024).toFixed(0)} MiB`);
    console.log(`postgres RSS (postmaster and backends, shared pages counted per process): ${(pgBefore / 1024).toFixed(0)} -> ${(pgAfter / 1024).toFixed(0)} MiB`);
    if (growth > criteria.maxRssGrowth) failures.push(`service RSS grew ${(growth * 100).toFixed(1)} % after warm-up`);
  } else failures.push('too few RSS samples to judge memory');

  const live = ledger.users.filter((u) => !u.deleted && !u.uncertain).length;
  console.log(`\nacknowledged writes: ${ledger.users.length} users (${live} live, ${ledger.users.filter((u) => u.deleted).length} deleted), ${ledger.tuples.length} tuples; unreadable or wrong: ${unverified.length}`);
  for (const problem of unverified.slice(0, 20)) console.log(`  ${problem}`);
  if (unverified.length) failures.push(`${unverified.length} acknowledged writes not read back as acknowledged`);
  if (ledger.contradictions.length) failures.push(`${ledger.contradictions.length} reads contradicted acknowledged writes: ${ledger.contradictions.slice(0, 5).join('; ')}`);
  return failures;
}

import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';

/**
 * The garbage collector's pauses of this process's event loop (perf_hooks 'gc' entries: wall time
 * of each pause, so a busy machine inflates them) from now until `stop`: total milliseconds, and
 * how many were scavenges (young generation) and mark-compacts (the whole heap).
 */
export function gcPauses() {
  const seen = { ms: 0, scavenges: 0, markCompacts: 0 };
  const count = (entry: PerformanceEntry) => {
    seen.ms += entry.duration;
    const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) seen.scavenges++;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) seen.markCompacts++;
  };
  const observer = new PerformanceObserver((list) => list.getEntries().forEach(count));
  observer.observe({ entryTypes: ['gc'] });
  return {
    /** Stops observing: the pauses seen since the start, in ms per unit of work, and their counts. */
    stop(units: number): { msPer: number; scavenges: number; markCompacts: number } {
      // Entries are delivered asynchronously: count those still buffered.
      observer.takeRecords().forEach(count);
      observer.disconnect();
      return { msPer: seen.ms / units, scavenges: seen.scavenges, markCompacts: seen.markCompacts };
    },
  };
}

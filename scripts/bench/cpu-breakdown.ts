/**
 * Where a CPU profile's busy samples went, by component: each sample goes to the first component
 * whose files appear anywhere on its stack (so a read model's SQL counts as the read model's), and
 * the samples whose stack holds no file of ours to what they were doing (the pg client answering a
 * query, Node's HTTP parser, GC). A share of the samples times the event loop's measured CPU gives
 * milliseconds per unit; the sampler's own cost is in neither.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

type Component = [name: string, test: RegExp];

/** In order: the first that matches a frame's file (or, for the last ones, function) names the sample. */
const BENCH = 'bench (load generator hand-off, counters)';
const COMPONENTS: Component[] = [
  [BENCH, /\/scripts\/bench\/(?!statement-counter)/],
  ['read models (projection batches)', /\/src\/platform\/projections\/(runner|checkpoints|batch-groups|projection)\.ts|\/projections\/[a-z-]+\.ts$/],
  ['relay and in-process bus (consumer groups)', /\/src\/platform\/(bus|relay|outbound)\//],
  ['reactions', /\/src\/platform\/reactions\/|\/reactions\.ts$/],
  ['shared log reader (read, decode, reveal)', /\/src\/platform\/eventstore\/(shared-log-reader|polling-subscription|history-pages)\.ts/],
  ['LISTEN/NOTIFY', /\/src\/platform\/eventstore\/postgres-listener\.ts/],
  ['login request (HTTP, command, append, token)', /\/src\/(modules|platform\/(http|commands|eventstore|events|crypto))\//],
  ['pg client (answers, pool hand-offs)', /\/node_modules\/(pg|pg-pool|pg-protocol)\//],
  ['HTTP (parser, sockets)', /^node:_http|\/node_modules\/(fastify|find-my-way|light-my-request)\//],
];

export function breakdown(profile: CpuProfile): { busy: number; shares: Array<{ name: string; share: number; sqlShare: number }> } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const hits = new Map<number, number>();
  for (const sample of profile.samples) hits.set(sample, (hits.get(sample) ?? 0) + 1);
  const totals = new Map<string, { samples: number; sql: number }>();
  let busy = 0;
  for (const [id, count] of hits) {
    const leaf = byId.get(id)!.callFrame.functionName;
    if (leaf === '(idle)') continue;
    busy += count;
    const urls: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) urls.push(byId.get(at)!.callFrame.url);
    const name =
      leaf === '(garbage collector)'
        ? 'GC'
        : leaf === '(program)'
          ? '(program: V8 and native, no JavaScript frame)'
          : (COMPONENTS.find(([, test]) => urls.some((url) => test.test(url)))?.[0] ?? 'other (timers, promise and async-hook machinery)');
    const sql = urls.some((url) => /\/node_modules\/(pg|pg-pool|pg-protocol)\/|statement-counter/.test(url));
    const total = totals.get(name) ?? { samples: 0, sql: 0 };
    total.samples += count;
    if (sql) total.sql += count;
    totals.set(name, total);
  }
  const shares = [...totals.entries()]
    .map(([name, { samples, sql }]) => ({ name, share: samples / busy, sqlShare: sql / busy }))
    .sort((a, b) => b.share - a.share);
  return { busy, shares };
}

/** The breakdown as lines of milliseconds per unit, scaled to `eventLoopMs` (the event loop's measured CPU per unit). */
export function describeBreakdown(profile: CpuProfile, eventLoopMs: number, unit: string): string[] {
  const { busy, shares: all } = breakdown(profile);
  // The bench's own samples fall mostly outside the measured window (its counters' walk of /proc): left out of the scale.
  const bench = all.find(({ name }) => name === BENCH);
  const shares = all.filter((entry) => entry !== bench).map((entry) => ({ ...entry, share: entry.share / (1 - (bench?.share ?? 0)), sqlShare: entry.sqlShare / (1 - (bench?.share ?? 0)) }));
  const width = Math.max(...shares.map(({ name }) => name.length));
  return [
    `where the event loop's ${eventLoopMs.toFixed(2)} ms a ${unit} went (${busy} busy samples, ${((bench?.share ?? 0) * 100).toFixed(1)}% of them the bench's own and left out; "SQL" = with the pg client on the stack):`,
    ...shares.map(
      ({ name, share, sqlShare }) =>
        `  ${name.padEnd(width)} ${(share * eventLoopMs).toFixed(2).padStart(6)} ms ${(share * 100).toFixed(1).padStart(5)}%  (SQL ${(sqlShare * eventLoopMs).toFixed(2)} ms)`,
    ),
  ];
}

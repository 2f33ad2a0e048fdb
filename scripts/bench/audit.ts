/**
 * bench:audit. (a) The PERMISSION_CHECK write path: FGA checks/s over HTTP (a listening server,
 * load from a separate process) with and without audit entries, and the rows/s the batched
 * writer stores. (b) GET /api/logs/audit p50/p99 with filters over 1,000,000 entries in one tenant
 * (rows seeded with generate_series straight into audit_log: its trigger allows INSERT).
 */
import { cpus, loadavg } from 'node:os';
import { AUDIT_TOTAL_CAP } from '../../src/modules/audit/queries.ts';
import { driveTuples, pick, USERS, DOCUMENTS, DRIVE_MODEL, viewerCheck } from './drive-dataset.ts';
import { parseTuple } from '../../src/modules/fga/tuple.ts';
import { httpLoad, pinToCore } from './http-load.ts';
import { benchService, timed } from './service.ts';
import { fmt, nodeCpu, postgresCpu } from './support.ts';

const TENANT = 'platform';
const ENTRIES = 1_000_000;
const CHECKS = 20_000;
/**
 * The server on core 0 and the load generator on core 1, PostgreSQL unpinned: the server is pinned
 * once PostgreSQL runs, and unpinned before the next one starts (a child inherits the pinning).
 */
const SERVER_CORE = 0;
const LOAD_CORE = 1;
const ALL_CORES = `0-${cpus().length - 1}`;
let pinned = false;
/** Rounds of (off, on): alternating spreads a drift of the machine's load over both sides. */
const ROUNDS = 2;

type Bench = Awaited<ReturnType<typeof benchService>>;

async function adminToken(bench: Bench): Promise<string> {
  return (await bench.service.tokens.issue({ sub: 'bench', tid: TENANT, roles: ['admin'], acr: 'aal1', amr: ['pwd'] }, 3600)).token;
}

/** A small drive dataset (the checks' cost is not the point here, the audit's is). */
async function seedTuples(bench: Bench, token: string): Promise<void> {
  const modelId = (await bench.inject('POST', '/api/fga/models', { name: 'drive', dsl: DRIVE_MODEL }, token)).data.id;
  await bench.inject('POST', `/api/fga/models/${modelId}/activate`, {}, token);
  const texts: string[] = [];
  driveTuples((text) => texts.length < 5_000 && texts.push(text));
  const tuples = [...new Set(texts)].map(parseTuple);
  for (let i = 0; i < tuples.length; i += 100) await bench.inject('POST', '/api/fga/tuples/bulk', { writes: tuples.slice(i, i + 100) }, token);
}

interface CheckFigures {
  perSecond: number;
  /** CPU per check (server process, PostgreSQL) in µs: what the checks cost whatever else runs on the machine. */
  serverUs: number;
  postgresUs: number | null;
}

async function checkThroughput(audit: boolean): Promise<CheckFigures> {
  const bench = await benchService({ IAM_RELAY_ENABLED: 'false', AUDIT_PERMISSION_CHECKS: String(audit) });
  pinned = pinToCore(process.pid, SERVER_CORE);
  try {
    const token = await adminToken(bench);
    await seedTuples(bench, token);
    await bench.service.app.listen({ host: '127.0.0.1', port: 0 });
    const address = bench.service.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const headers = { 'x-tenant': TENANT, authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const bodies = Array.from({ length: 2_000 }, () => JSON.stringify(viewerCheck(`u${pick(USERS)}`, `d${pick(DOCUMENTS)}`)));
    const core = pinned ? LOAD_CORE : undefined;
    await httpLoad({ url: `http://127.0.0.1:${port}/api/fga/check`, headers, bodies, concurrency: 32, requests: 2_000, core }); // warm-up
    const postgres = await postgresCpu(bench.db.pool);
    const [nodeBefore, postgresBefore] = [nodeCpu(), postgres()];
    const started = performance.now();
    const result = await httpLoad({ url: `http://127.0.0.1:${port}/api/fga/check`, headers, bodies, concurrency: 32, requests: CHECKS, core });
    await bench.service.permissionChecks.drain();
    const seconds = (performance.now() - started) / 1000;
    const [nodeAfter, postgresAfter] = [nodeCpu(), postgres()];
    const serverUs = ((nodeAfter - nodeBefore) / CHECKS) * 1e6;
    const postgresUs = postgresBefore === null || postgresAfter === null ? null : ((postgresAfter - postgresBefore) / CHECKS) * 1e6;
    const { rows } = await bench.db.pool.query('select coalesce(sum(entry_count), 0)::int as n, count(*)::int as chunks from audit_permission_checks');
    const dropped = (await bench.service.app.inject({ method: 'GET', url: '/metrics' })).body.match(/iam_audit_permission_checks_dropped_total\{[^}]*\} (\d+)/)?.[1] ?? '0';
    console.log(
      `FGA check over HTTP, audit ${audit ? 'on ' : 'off'}: ${fmt(result.perSecond)} checks/s, p50 ${fmt(result.p50, 2)} ms, p99 ${fmt(result.p99, 2)} ms, failures ${result.failures}; ` +
        `CPU per check: server ${fmt(serverUs, 1)} us, PostgreSQL ${postgresUs === null ? 'n/a' : `${fmt(postgresUs, 1)} us`}` +
        (audit ? `; ${fmt(rows[0].n)} entries written in ${fmt(rows[0].chunks)} chunk rows (${fmt(rows[0].n / seconds)} entries/s incl. final drain), dropped ${dropped}` : ''),
    );
    return { perSecond: result.perSecond, serverUs, postgresUs };
  } finally {
    await bench.close();
    if (pinned) pinToCore(process.pid, ALL_CORES);
  }
}

async function seedEntries(bench: Bench): Promise<void> {
  // 70% permission checks, the rest spread over eight actions; 1,000 users; one year of time. The
  // checks are stored as the writer stores them (migration 0029): an entry every 31.5 s from
  // rotating users makes every chunk a single entry, the most chunk rows 700,000 checks can take.
  const entries = `select i, timestamptz '2025-01-01' + (i * interval '31536 milliseconds') as at from generate_series(1, $2) as i`;
  await bench.db.pool.query(
    `insert into audit_log (tenant_id, id, action, user_id, resource, resource_id, status, client_ip, user_agent, metadata, created_at)
     select $1, gen_random_uuid(),
            (array['LOGIN','USER_UPDATED','ROLE_ASSIGNMENT','USER_CREATED','LOGOUT','PASSWORD_CHANGE','ROLE_CREATED','SESSION_REVOKED'])[1 + (i / 10) % 8],
            'user-' || (i % 1000), 'user', 'user-' || (i % 997), case when i % 50 = 0 then 'failure' else 'success' end,
            '203.0.113.' || (i % 250), 'bench/1.0', jsonb_build_object('n', i), at
       from (${entries}) as e where i % 10 >= 7`,
    [TENANT, ENTRIES],
  );
  await bench.db.pool.query(
    `insert into audit_permission_checks (tenant_id, chunk_id, user_id, client_ip, user_agent, first_created_at, last_created_at, entry_count, entries)
     select $1, gen_random_uuid(), 'user-' || (i % 1000), '203.0.113.' || (i % 250), 'bench/1.0', at, at, 1,
            json_build_array(json_build_array(gen_random_uuid(), to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              case when i % 50 = 0 then 'failure' else 'success' end, null, null, json_build_object('n', i)))::text
       from (${entries}) as e where i % 10 < 7`,
    [TENANT, ENTRIES],
  );
  await bench.db.pool.query('vacuum analyze audit_log, audit_permission_checks');
}

async function listingLatency(): Promise<void> {
  const bench = await benchService({ IAM_RELAY_ENABLED: 'false' });
  try {
    const token = await adminToken(bench);
    const seeding = performance.now();
    await seedEntries(bench);
    console.log(`seeded ${fmt(ENTRIES)} entries in ${fmt((performance.now() - seeding) / 1000, 1)} s (generate_series, then vacuum analyze)`);
    const queries: Record<string, string> = {
      // Matches nothing: the fixed cost of a request (auth, permission, serialization) on this machine now.
      'userId=nobody (baseline: no rows)': '?userId=nobody',
      'default (PERMISSION_CHECK excluded)': '',
      'action=LOGIN': '?action=LOGIN',
      'action=PERMISSION_CHECK': '?action=PERMISSION_CHECK',
      'userId=user-47': '?userId=user-47',
      'one day (startDate=endDate=2025-06-01)': '?startDate=2025-06-01&endDate=2025-06-01',
      'excludeActions= (everything)': '?excludeActions=',
      'excludeActions=LOGIN,LOGOUT': '?excludeActions=LOGIN,LOGOUT',
      'action=LOGIN, one month, userId': '?action=LOGIN&userId=user-47&startDate=2025-03-01&endDate=2025-03-31',
      'default, offset=10000': '?offset=10000',
      'limit=500': '?limit=500',
      // Permission checks are expanded from their chunks and merged with audit_log.
      'action=PERMISSION_CHECK, userId=user-42': '?action=PERMISSION_CHECK&userId=user-42',
      'action=PERMISSION_CHECK, one day': '?action=PERMISSION_CHECK&startDate=2025-06-01&endDate=2025-06-01',
      'action=PERMISSION_CHECK, offset=10000': '?action=PERMISSION_CHECK&offset=10000',
      'excludeActions=, one month, userId, offset=5': '?excludeActions=&userId=user-42&startDate=2025-03-01&endDate=2025-03-31&offset=5',
      'excludeActions=, limit=500': '?excludeActions=&limit=500',
    };
    for (const [label, query] of Object.entries(queries)) {
      let total = 0;
      await bench.inject('GET', `/api/logs/audit${query}`, undefined, token);
      const result = await timed(40, 1, async () => {
        total = (await bench.inject('GET', `/api/logs/audit${query}`, undefined, token)).pagination.total;
      });
      console.log(`GET /api/logs/audit ${label}: p50 ${fmt(result.p50, 1)} ms, p99 ${fmt(result.p99, 1)} ms (total ${fmt(total)})`);
    }
    // Why the listing stops counting at AUDIT_TOTAL_CAP, and counts in the page's order: the full
    // count, the capped one unordered (the planner may pick a sequential scan), and the listing's.
    for (const [label, condition] of [
      ['default', "action <> 'PERMISSION_CHECK'"],
      ['everything', 'true'],
    ] as const) {
      const capped = (order: string) => `select count(*) from (select from audit_log where tenant_id = $1 and ${condition} ${order} limit ${AUDIT_TOTAL_CAP}) as m`;
      for (const [kind, sql] of [
        ['count(*)', `select count(*) from audit_log where tenant_id = $1 and ${condition}`],
        [`count capped at ${AUDIT_TOTAL_CAP}, unordered`, capped('')],
        [`count capped at ${AUDIT_TOTAL_CAP}, page order (the listing's)`, capped('order by created_at desc, id desc')],
      ] as const) {
        const plan = await bench.db.pool.query(`explain (analyze, format json) ${sql}`, [TENANT]);
        const top = plan.rows[0]['QUERY PLAN'][0];
        const scan = JSON.stringify(top.Plan).match(/"Node Type":"(Index Only Scan|Seq Scan|Index Scan|Bitmap Heap Scan)"/)?.[1];
        console.log(`${kind} ${label}: ${fmt(top['Execution Time'], 1)} ms (${scan})`);
      }
    }
    console.log(`load average ${loadavg().map((n) => n.toFixed(2)).join(' ')} (${cpus().length} cores)`);
  } finally {
    await bench.close();
  }
}

/** `npm run bench:audit -- listing` (or `writes`) runs one half only. */
async function main(part = process.argv[2]): Promise<void> {
  if (part !== 'listing') {
    const off: CheckFigures[] = [];
    const on: CheckFigures[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      off.push(await checkThroughput(false));
      on.push(await checkThroughput(true));
    }
    const mean = (figures: CheckFigures[]): CheckFigures => ({
      perSecond: figures.reduce((sum, f) => sum + f.perSecond, 0) / figures.length,
      serverUs: figures.reduce((sum, f) => sum + f.serverUs, 0) / figures.length,
      postgresUs: figures.some((f) => f.postgresUs === null) ? null : figures.reduce((sum, f) => sum + f.postgresUs!, 0) / figures.length,
    });
    const [without, withAudit] = [mean(off), mean(on)];
    console.log(pinned ? `server on core ${SERVER_CORE}, load generator on core ${LOAD_CORE} (PostgreSQL unpinned)` : 'taskset unavailable: nothing pinned');
    // The goal (issue 12): writing PERMISSION_CHECK entries slows checks by no more than 10%. The
    // CPU figures say the same independently of other load on the machine (the server, load
    // generator and PostgreSQL share its cores).
    const cpuOf = (f: CheckFigures) => f.serverUs + (f.postgresUs ?? 0);
    console.log(
      `Mean of ${ROUNDS} rounds: ${fmt(without.perSecond)} checks/s with recording off, ${fmt(withAudit.perSecond)} with it on; ` +
        `PERMISSION_CHECK audit costs ${fmt((1 - withAudit.perSecond / without.perSecond) * 100, 1)}% of check throughput (goal: at most 10%); ` +
        `CPU per check (server + PostgreSQL) ${fmt(cpuOf(without), 1)} us without, ${fmt(cpuOf(withAudit), 1)} us with audit (+${fmt((cpuOf(withAudit) / cpuOf(without) - 1) * 100, 1)}%); ` +
        `load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}`,
    );
  }
  if (part !== 'writes') await listingLatency();
}

await main();

/**
 * bench:history. (a) GET /api/events as NDJSON over a real socket: a million events of one tenant
 * streamed to a client that counts lines as they arrive; events/s and the server's peak RSS
 * (client in the same process: its share is one chunk at a time). (b) FGA check with asOf over a
 * year of ~1,000,000 Drive tuples (--tuples to take fewer): p50/p99 for instants within the last
 * day, in the oldest day and mid-year. --feed-only / --asof-only run one part.
 * Seeds go straight into the events table (one transaction per 100,000, positions as appends give
 * them) before the service starts, with every log reader's checkpoint at the head, so only the
 * measured path reads them.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { loadavg } from 'node:os';
import type { CheckRequest } from '../../src/modules/fga/engine/authorization-engine.ts';
import { compileModel } from '../../src/modules/fga/model.ts';
import { modelsStreamId } from '../../src/modules/fga/models/events.ts';
import { parseTuple } from '../../src/modules/fga/tuple.ts';
import { aliceDocument, DOCUMENTS, DRIVE_MODEL, driveTuples, pick, USERS, viewerCheck } from './drive-dataset.ts';
import { benchService, timed } from './service.ts';
import { fmt, nodeCpu, numberOption, postgresCpu } from './support.ts';

const TENANT = 'platform';
const SEED_BATCH = 100_000;

type Built = Parameters<NonNullable<Parameters<typeof benchService>[1]>>[0];

/** Every projection, reaction and the relay start at the head: the seed is history they need not replay. */
async function skipReadersPastSeed({ db, service }: Built): Promise<void> {
  const { rows } = await db.pool.query<{ head: string }>('select coalesce(max(position), 0) as head from events');
  const head = rows[0]!.head;
  await db.pool.query('insert into projection_checkpoints (name, position) select unnest($1::text[]), $2', [service.runner.workers.map((w) => w.projection.name), head]);
  await db.pool.query('insert into reaction_checkpoints (name, position) select unnest($1::text[]), $2', [service.reactions.workers.map((w) => w.reaction.name), head]);
}

/** EmailLinkIssued events (secretHash is sensitive: the feed strips it), one stream each. */
async function seedEvents({ db }: Built, count: number): Promise<void> {
  const client = await db.pool.connect();
  for (let done = 0; done < count; done += SEED_BATCH) {
    // An appender registers before its transaction writes (migration 0031).
    await client.query('begin; select events_register_appender()');
    await client.query(
      `insert into events (position, event_id, stream_id, revision, type, data, metadata)
       select (pg_current_xact_id()::text::bigint << 20) | i, gen_random_uuid(), 'emaillink-' || $1::text || '.' || ($2::int + i), 0, 'EmailLinkIssued',
              jsonb_build_object('linkId', ($2 + i)::text, 'userId', 'u' || (i % 1000), 'purpose', 'magic_link',
                                 'secretHash', md5(i::text), 'expiresAt', '2026-01-01T00:15:00.000Z', 'passwordVersion', 1),
              jsonb_build_object('tenantId', $1, 'actor', 'bench', 'occurredAt', to_char((timestamptz '2026-01-01' + ($2 + i) * interval '1 millisecond') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'schemaVersion', 1)
         from generate_series(1, least($3::int, $4::int - $2::int)) as i`,
      [TENANT, done, SEED_BATCH, count],
    );
    await client.query('commit');
  }
  client.release();
  await db.pool.query('vacuum analyze events');
}

/** Streams the NDJSON feed over HTTP, counting lines; samples RSS meanwhile. */
async function streamFeed(port: number, token: string): Promise<{ lines: number; seconds: number; peakRss: number }> {
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50);
  const started = performance.now();
  try {
    const lines = await new Promise<number>((resolve, reject) => {
      const request = http.get(
        { host: '127.0.0.1', port, path: '/api/events', headers: { 'x-tenant': TENANT, authorization: `Bearer ${token}`, accept: 'application/x-ndjson' } },
        (response) => {
          if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`));
          let count = 0;
          response.on('data', (chunk: Buffer) => {
            for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) count += 1;
          });
          response.on('end', () => resolve(count));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
    });
    return { lines, seconds: (performance.now() - started) / 1000, peakRss };
  } finally {
    clearInterval(sampler);
  }
}

async function feedThroughput(count: number): Promise<void> {
  const seeding = performance.now();
  const bench = await benchService({ IAM_RELAY_ENABLED: 'false' }, async (built) => {
    await seedEvents(built, count);
    await skipReadersPastSeed(built);
  });
  try {
    console.log(`seeded ${fmt(count)} events in ${fmt((performance.now() - seeding) / 1000, 1)} s`);
    const token = (await bench.service.tokens.issue({ sub: 'bench', tid: TENANT, roles: ['admin'], acr: 'aal1', amr: ['pwd'] }, 3600)).token;
    await bench.service.app.listen({ host: '127.0.0.1', port: 0 });
    const address = bench.service.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const postgres = await postgresCpu(bench.db.pool);
    for (let run = 1; run <= 2; run += 1) {
      const before = process.memoryUsage.rss();
      const [nodeBefore, postgresBefore] = [nodeCpu(), postgres()];
      const { lines, seconds, peakRss } = await streamFeed(port, token);
      const [nodeUs, postgresAfter] = [((nodeCpu() - nodeBefore) / lines) * 1e6, postgres()];
      const postgresUs = postgresBefore === null || postgresAfter === null ? null : ((postgresAfter - postgresBefore) / lines) * 1e6;
      console.log(
        `GET /api/events NDJSON, run ${run}: ${fmt(lines)} events in ${fmt(seconds, 1)} s = ${fmt(lines / seconds)} events/s; ` +
          `RSS before ${fmt(before / 2 ** 20)} MiB, peak ${fmt(peakRss / 2 ** 20)} MiB; CPU per event: this process (server and client) ${fmt(nodeUs, 1)} us, ` +
          `PostgreSQL ${postgresUs === null ? 'n/a' : `${fmt(postgresUs, 1)} us`} (load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`,
      );
      if (lines < count) throw new Error(`the stream ended after ${lines} of at least ${count} events`);
    }
  } finally {
    await bench.close();
  }
}

const DAY_MS = 86_400_000;

/**
 * A year of authorization history for the platform tenant: its first event and the Drive model
 * (created and activated) a year ago, then every Drive tuple written at a time spread over the
 * year in generation order (groups and folders first), one in ten deleted later. Tuple lifetimes
 * go straight into fga_tuple_history as the fga-history projection writes them (the standing ones
 * are the view fga_tuples): the projection's own speed is not what is measured.
 */
async function seedTupleHistory({ db, store }: Built, limit: number): Promise<{ began: number; tuples: number }> {
  const began = Date.now() - 366 * DAY_MS;
  const at = (ms: number) => new Date(ms).toISOString();
  const metadata = (ms: number) => ({ tenantId: TENANT, actor: 'bench', occurredAt: at(ms) });
  const modelId = randomUUID();
  const { schema } = compileModel(DRIVE_MODEL);
  await store.append(modelsStreamId(TENANT), [
    { id: randomUUID(), type: 'FgaModelCreated', data: { modelId, name: 'drive', version: 1, dsl: DRIVE_MODEL, schema }, metadata: metadata(began) },
    { id: randomUUID(), type: 'FgaModelActivated', data: { modelId, previousModelId: null }, metadata: metadata(began) },
  ]);
  const texts = new Set<string>();
  driveTuples((text) => texts.size < limit && texts.add(text));
  const tuples = [...texts].map(parseTuple);
  const span = Date.now() - DAY_MS / 24 - (began + 60_000);
  for (let start = 0; start < tuples.length; start += 10_000) {
    const rows = tuples.slice(start, start + 10_000).map((tuple, i) => {
      const n = start + i;
      const written = began + 60_000 + Math.floor((span * n) / tuples.length);
      const deleted = n % 10 === 0 ? written + Math.floor((Date.now() - written) / 2) : null;
      return [tuple.objectType, tuple.objectId, tuple.relation, tuple.subjectType, tuple.subjectId, tuple.subjectRelation ?? '', String(n + 1), at(written), deleted === null ? null : at(deleted)];
    });
    const columns = rows[0]!.map((_, c) => rows.map((row) => row[c]));
    await db.pool.query(
      `insert into fga_tuple_history (tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, written_position, written_at, deleted_at)
       select $1, * from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::timestamptz[], $10::timestamptz[])`,
      [TENANT, ...columns],
    );
  }
  await db.pool.query('vacuum analyze fga_tuple_history');
  return { began, tuples: tuples.length };
}

async function asOfLatency(limit: number): Promise<void> {
  const seeding = performance.now();
  let seeded = { began: 0, tuples: 0 };
  const bench = await benchService({ IAM_RELAY_ENABLED: 'false' }, async (built) => {
    seeded = await seedTupleHistory(built, limit);
    await skipReadersPastSeed(built);
  });
  try {
    console.log(`seeded ${fmt(seeded.tuples)} tuple lifetimes over a year in ${fmt((performance.now() - seeding) / 1000, 1)} s`);
    const now = Date.now();
    const instants = {
      'within the last day': () => new Date(now - 60_000 - pick(DAY_MS - 60_000)),
      'the oldest day (few tuples yet)': () => new Date(seeded.began + 60_000 + pick(DAY_MS)),
      'mid-year': () => new Date(seeded.began + 183 * DAY_MS + pick(DAY_MS)),
    };
    const samples = {
      'random user x random document': () => viewerCheck(`u${pick(USERS)}`, `d${pick(DOCUMENTS)}`),
      'alice, 2 nested groups and 3 folder levels': () => viewerCheck('alice', aliceDocument()),
    };
    const check = (request: CheckRequest, at: Date) => bench.service.fga.asOf.check(TENANT, request, at);
    await timed(200, 1, () => check(samples['random user x random document'](), instants['within the last day']())); // warm-up
    for (const [when, instant] of Object.entries(instants)) {
      for (const [label, sample] of Object.entries(samples)) {
        let allowed = 0;
        const result = await timed(500, 1, async () => {
          allowed += Number((await check(sample(), instant())).allowed);
        });
        console.log(
          `asOf check, ${when}, ${label}: p50 ${fmt(result.p50, 1)} ms, p99 ${fmt(result.p99, 1)} ms, ${fmt(result.perSecond)}/s, ` +
            `${allowed} of 500 allowed (load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`,
        );
      }
    }
  } finally {
    await bench.close();
  }
}

const part = process.argv.includes('--asof-only') ? 'asof' : process.argv.includes('--feed-only') ? 'feed' : 'all';
if (part !== 'asof') await feedThroughput(numberOption('events', 1_000_000));
if (part !== 'feed') await asOfLatency(numberOption('tuples', 2_000_000));

/**
 * bench:history. (a) GET /api/events as NDJSON over a real socket: a million events of one tenant
 * streamed to a client that counts lines as they arrive; events/s and the server's peak RSS
 * (client in the same process: its share is one chunk at a time). (b) FGA check with asOf at a
 * million tuple writes (see --tuples): p50/p99 for instants within the last day and for the oldest.
 * Seeds go straight into the events table (one transaction per 100,000, positions as appends give
 * them) before the service starts, with every log reader's checkpoint at the head, so only the
 * measured path reads them.
 */
import http from 'node:http';
import { benchService } from './service.ts';
import { fmt, numberOption } from './support.ts';
import { loadavg } from 'node:os';

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
  for (let done = 0; done < count; done += SEED_BATCH) {
    await db.pool.query(
      `insert into events (position, event_id, stream_id, revision, type, data, metadata)
       select (pg_current_xact_id()::text::bigint << 20) | i, gen_random_uuid(), 'emaillink-' || $1::text || '.' || ($2::int + i), 0, 'EmailLinkIssued',
              jsonb_build_object('linkId', ($2 + i)::text, 'userId', 'u' || (i % 1000), 'purpose', 'magic_link',
                                 'secretHash', md5(i::text), 'expiresAt', '2026-01-01T00:15:00.000Z', 'passwordVersion', 1),
              jsonb_build_object('tenantId', $1, 'actor', 'bench', 'occurredAt', to_char((timestamptz '2026-01-01' + ($2 + i) * interval '1 millisecond') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'schemaVersion', 1)
         from generate_series(1, least($3::int, $4::int - $2::int)) as i`,
      [TENANT, done, SEED_BATCH, count],
    );
  }
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
    for (let run = 1; run <= 2; run += 1) {
      const before = process.memoryUsage.rss();
      const { lines, seconds, peakRss } = await streamFeed(port, token);
      console.log(
        `GET /api/events NDJSON, run ${run}: ${fmt(lines)} events in ${fmt(seconds, 1)} s = ${fmt(lines / seconds)} events/s; ` +
          `RSS before ${fmt(before / 2 ** 20)} MiB, peak ${fmt(peakRss / 2 ** 20)} MiB (load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`,
      );
      if (lines < count) throw new Error(`the stream ended after ${lines} of at least ${count} events`);
    }
  } finally {
    await bench.close();
  }
}

await feedThroughput(numberOption('events', 1_000_000));

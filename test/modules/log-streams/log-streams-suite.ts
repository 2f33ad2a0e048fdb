import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent } from 'node:https';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '../../support/https-receiver.ts';
import { platformAIntake, platformBCollector } from '../../support/log-intakes.ts';
import { s3CaFile, s3Endpoint, whenS3Reachable } from '../../support/s3.ts';
import { PLATFORM, type TestService } from '../../support/service.ts';
import { adminToken, startWebhookService, WAIT } from '../webhooks/webhook-fixtures.ts';

/** Receivers speak at these paths of one local HTTPS server: the two platforms' intakes as those answer (log-intakes.ts). */
const PATHS = { webhook: '/stream', platformA: '/api/v2/logs', platformB: '/services/collector/event' };
const PLATFORM_A_KEYS = new Set(['a-key-1']);
const PLATFORM_B_TOKENS = new Set(['hec-token-1']);

/**
 * Log streams end to end, the same tests for the in-process bus and for Kafka (`env` names the
 * broker and a topic of the test's own).
 */
export function logStreamSuite(env: () => Record<string, string>): void {
  let receiver: HttpsReceiver;
  let t: TestService;
  let token: string;
  let failing = new Set<string>();
  const base = () => `https://localhost:${receiver.port}`;
  const call = (method: string, url: string, body?: unknown) => t.request({ method, url, body, token, tenant: PLATFORM });
  const at = (pathname: string) => receiver.requests.filter((request) => request.url === pathname);
  const records = (requests: ReceivedRequest[]) => requests.map((request) => JSON.parse(request.body));
  const createStream = async (body: Record<string, unknown>) => {
    const created = await call('POST', '/api/log-streams', body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.data as { id: string; config: Record<string, unknown> };
  };
  let users = 0;
  const createUser = async () => {
    users += 1;
    const user = await call('POST', '/api/users', { email: `stream${users}@platform.test`, password: 'Passw0rdOk', firstName: 'Ada' });
    expect(user.status).toBe(201);
    return user.body.data.id as string;
  };

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    receiver.answer((request) => {
      if (failing.has(request.url)) return { status: 500, body: 'down' };
      if (request.url === PATHS.platformA) return platformAIntake(request, PLATFORM_A_KEYS);
      if (request.url === PATHS.platformB) return platformBCollector(request, PLATFORM_B_TOKENS);
      return { status: 200, body: 'ok' };
    });
    // One trust file for the receiver and, when it runs, the S3-compatible server.
    const caFile = path.join(mkdtempSync(path.join(tmpdir(), 'log-streams-')), 'ca.pem');
    writeFileSync(caFile, [readFileSync(receiver.caFile, 'utf8'), existsSync(s3CaFile) ? readFileSync(s3CaFile, 'utf8') : ''].join('\n'));
    t = await startWebhookService({ ...receiver, caFile }, {
      env: { ...env(), IAM_LOG_STREAM_RETRY_BASE_MS: '100', IAM_LOG_PLATFORM_A_URL: `https://localhost:${receiver.port}${PATHS.platformA}` },
    });
    token = await adminToken(t);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('WEBHOOK: a test delivery at creation, then each filtered audit entry flat with the configured headers; secrets masked on every read', async () => {
    const stream = await createStream({
      name: 'SIEM',
      type: 'WEBHOOK',
      config: { url: `${base()}${PATHS.webhook}`, headers: { Authorization: 'Bearer s3cr3t-value', 'X-Api-Key': 'k-123', 'X-Team': 'blue' } },
      eventFilters: ['USER_CREATED'],
    });
    expect(stream.config).toEqual({ url: `${base()}${PATHS.webhook}`, headers: { Authorization: '********', 'X-Api-Key': '********', 'X-Team': 'blue' } });
    const [test] = at(PATHS.webhook);
    expect(JSON.parse(test!.body)).toMatchObject({ action: 'LOG_STREAM_TEST', resource: 'log_stream', resourceId: stream.id, status: 'success' });
    expect(test!.headers).toMatchObject({ authorization: 'Bearer s3cr3t-value', 'x-team': 'blue', 'content-type': 'application/json', 'user-agent': 'IAM-LogStream/1.0' });

    const userId = await createUser();
    await call('POST', '/api/roles', { name: 'filtered-out', permissions: [] });
    await vi.waitFor(() => expect(records(at(PATHS.webhook)).map((r) => r.action)).toContain('USER_CREATED'), WAIT);
    const record = records(at(PATHS.webhook)).find((r) => r.action === 'USER_CREATED');
    expect(Object.keys(record).sort()).toEqual(['action', 'clientIp', 'metadata', 'resource', 'resourceId', 'status', 'timestamp', 'userAgent', 'userId']);
    expect(record).toMatchObject({ resource: 'user', resourceId: userId, status: 'success' });
    // The audit log's own entry, so the same metadata.
    const audit = (await call('GET', '/api/logs/audit?action=USER_CREATED')).body.data.find((entry: { resourceId: string }) => entry.resourceId === userId);
    expect(record.metadata).toEqual(audit.metadata);
    expect(records(at(PATHS.webhook)).map((r) => r.action)).not.toContain('ROLE_CREATED');

    // A delivery is recorded once its answer is in: the receiver may hold it a moment before the count shows it.
    const read = await vi.waitFor(async () => {
      const answer = await call('GET', `/api/log-streams/${stream.id}`);
      expect(answer.body.data.deliveryCount).toBeGreaterThanOrEqual(1);
      return answer;
    }, WAIT);
    expect(read.body).toMatchObject({ success: true, data: { id: stream.id, status: 'active', eventFilters: ['USER_CREATED'], config: stream.config, errorCount: 0 } });
    expect(read.body.data.lastDeliveryAt).not.toBeNull();
    const list = await call('GET', '/api/log-streams');
    expect(list.body.data.find((s: { id: string }) => s.id === stream.id).config).toEqual(stream.config);
    const { rows } = await t.db.pool.query("select count(*)::int as n from events where data::text like '%s3cr3t-value%' or data::text like '%k-123%'");
    expect(rows[0].n).toBe(0);
    const logged = await call('GET', '/api/logs/audit?action=LOG_STREAM_CREATED');
    expect(JSON.stringify(logged.body)).not.toMatch(/s3cr3t-value|k-123/);
  });

  it('refuses bad input: http URLs, internal or metadata addresses, unknown filters, incomplete configurations, a taken name, a failing test delivery', async () => {
    const webhook = (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ name: 'bad', type: 'WEBHOOK', config, ...extra });
    for (const body of [
      webhook({ url: 'http://example.com/logs' }),
      webhook({ url: 'https://169.254.169.254/latest' }),
      webhook({ url: `${base()}${PATHS.webhook}` }, { eventFilters: ['USER_TELEPORTED'] }),
      webhook({ url: `${base()}${PATHS.webhook}`, headers: { 'Bad Header': 'x' } }),
      webhook({ url: `${base()}${PATHS.webhook}`, headers: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`x-h${i}`, '1'])) }),
      { name: 'bad', type: 'OBJECT_STORE', config: { bucket: 'b', region: 'us-east-1' } },
      { name: 'bad', type: 'LOG_PLATFORM_A', config: { apiKey: 'k', region: 'mars1' } },
      { name: 'bad', type: 'KAFKA', config: {} },
    ]) {
      const answer = await call('POST', '/api/log-streams', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
    }
    await createStream({ name: 'Unique', type: 'WEBHOOK', config: { url: `${base()}${PATHS.webhook}` } });
    const taken = await call('POST', '/api/log-streams', { name: 'UNIQUE', type: 'WEBHOOK', config: { url: `${base()}${PATHS.webhook}` } });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ success: false, error: { code: 'STREAM_NAME_TAKEN' } });

    failing = new Set(['/refuses']);
    const refused = await call('POST', '/api/log-streams', { name: 'refused', type: 'WEBHOOK', config: { url: `${base()}/refuses` } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('TEST_DELIVERY_FAILED');
    expect(refused.body.error.message).toContain('500');
    failing = new Set();
    expect((await call('GET', '/api/log-streams/01900000-0000-7000-8000-00000000dead')).status).toBe(404);
  });

  it('LOG_PLATFORM_A posts to the log intake with its API key; LOG_PLATFORM_B posts HEC events with its token', async () => {
    const a = await createStream({ name: 'platform-a', type: 'LOG_PLATFORM_A', config: { apiKey: 'a-key-1', region: 'eu1', service: 'iam-prod' }, eventFilters: ['USER_CREATED'] });
    const b = await createStream({ name: 'platform-b', type: 'LOG_PLATFORM_B', config: { hecUrl: `${base()}/`, hecToken: 'hec-token-1', index: 'security' }, eventFilters: ['USER_CREATED'] });
    expect(a.config).toMatchObject({ apiKey: '********', region: 'eu1' });
    expect(b.config).toMatchObject({ hecToken: '********', index: 'security' });
    // Each creation's test delivery was accepted by its intake.
    const accepted = (path: string) => at(path).filter((request) => request.answered < 300);
    expect(accepted(PATHS.platformA).flatMap((request) => JSON.parse(request.body)).map((entry) => JSON.parse(entry.message))).toContainEqual(
      expect.objectContaining({ action: 'LOG_STREAM_TEST', resourceId: a.id }),
    );
    expect(accepted(PATHS.platformB).map((request) => JSON.parse(request.body).event)).toContainEqual(expect.objectContaining({ action: 'LOG_STREAM_TEST', resourceId: b.id }));
    // A key or token the intake does not know fails the creation's test delivery with the intake's answer.
    for (const body of [
      { name: 'platform-a-bad', type: 'LOG_PLATFORM_A', config: { apiKey: 'revoked-key', region: 'eu1' } },
      { name: 'platform-b-bad', type: 'LOG_PLATFORM_B', config: { hecUrl: `${base()}/`, hecToken: 'revoked-token' } },
    ]) {
      const refused = await call('POST', '/api/log-streams', body);
      expect(refused.status, body.type).toBe(400);
      expect(refused.body.error, body.type).toMatchObject({ code: 'TEST_DELIVERY_FAILED', message: expect.stringContaining('403') });
    }
    const userId = await createUser();
    await vi.waitFor(() => {
      expect(records(at(PATHS.platformA)).flat().map((entry) => JSON.parse(entry.message).resourceId)).toContain(userId);
      expect(records(at(PATHS.platformB)).map((entry) => entry.event.resourceId)).toContain(userId);
    }, WAIT);

    const [intake] = at(PATHS.platformA).filter((request) => request.body.includes(userId));
    expect(intake!.headers).toMatchObject({ 'dd-api-key': 'a-key-1', 'content-type': 'application/json' });
    const [entry] = JSON.parse(intake!.body);
    expect(entry).toMatchObject({ ddsource: 'iam', service: 'iam-prod', ddtags: 'action:USER_CREATED,status:success' });

    const [collector] = at(PATHS.platformB).filter((request) => request.body.includes(userId));
    expect(collector!.headers.authorization).toBe('Splunk hec-token-1');
    const event = JSON.parse(collector!.body);
    expect(event).toMatchObject({ source: 'iam', sourcetype: '_json', index: 'security', event: { action: 'USER_CREATED', resourceId: userId } });
    expect(event.time).toBeCloseTo(new Date(event.event.timestamp).getTime() / 1000, 3);
  });

  it('a paused stream drops events, a resumed one takes them again; 10 consecutive failed deliveries (8 attempts each) put it in error until set active', async () => {
    const stream = await createStream({ name: 'pausable', type: 'WEBHOOK', config: { url: `${base()}/pausable` }, eventFilters: ['USER_CREATED'] });
    const paused = await call('PUT', `/api/log-streams/${stream.id}`, { status: 'paused' });
    expect(paused.body).toMatchObject({ success: true, data: { id: stream.id, status: 'paused' } });
    const whilePaused = await createUser();
    expect((await call('PUT', `/api/log-streams/${stream.id}`, { status: 'active' })).body.data.status).toBe('active');
    const afterResume = await createUser();
    await vi.waitFor(() => expect(records(at('/pausable')).map((r) => r.resourceId)).toContain(afterResume), WAIT);
    expect(records(at('/pausable')).map((r) => r.resourceId)).not.toContain(whilePaused);

    failing = new Set(['/pausable']);
    // Retries 100 ms x 2^n apart at most (IAM_LOG_STREAM_RETRY_BASE_MS): each delivery fails after its 8th attempt.
    for (let i = 0; i < 10; i += 1) await createUser();
    await vi.waitFor(async () => expect((await call('GET', `/api/log-streams/${stream.id}`)).body.data.status).toBe('error'), { ...WAIT, timeout: 60_000 });
    const inError = (await call('GET', `/api/log-streams/${stream.id}`)).body.data;
    expect(inError.errorCount).toBe(80);
    expect(inError.lastError).toContain('500');
    // The audit projection may apply the event after the log streams' read model showed it.
    await vi.waitFor(async () => {
      const disabled = await call('GET', `/api/logs/audit?action=LOG_STREAM_DISABLED`);
      expect(disabled.body.data.find((e: { resourceId: string }) => e.resourceId === stream.id)?.metadata.consecutiveFailures).toBe(10);
    }, WAIT);

    failing = new Set();
    expect((await call('PUT', `/api/log-streams/${stream.id}`, { status: 'active' })).body.data.status).toBe('active');
    const afterRepair = await createUser();
    await vi.waitFor(() => expect(records(at('/pausable')).map((r) => r.resourceId)).toContain(afterRepair), WAIT);
    expect((await call('GET', `/api/log-streams/${stream.id}`)).body.data.status).toBe('active');
  }, 90_000);

  it('updates keep masked secrets, rename within uniqueness, and delete stops delivery', async () => {
    const stream = await createStream({ name: 'editable', type: 'WEBHOOK', config: { url: `${base()}/editable`, headers: { Authorization: 'Bearer keep-me' } } });
    const updated = await call('PUT', `/api/log-streams/${stream.id}`, { name: 'edited', config: { url: `${base()}/edited`, headers: { Authorization: '********' } }, eventFilters: ['USER_CREATED'] });
    expect(updated.body).toMatchObject({ success: true, data: { name: 'edited', eventFilters: ['USER_CREATED'], config: { url: `${base()}/edited`, headers: { Authorization: '********' } } } });
    const userId = await createUser();
    await vi.waitFor(() => expect(records(at('/edited')).map((r) => r.resourceId)).toContain(userId), WAIT);
    expect(at('/edited')[0]!.headers.authorization).toBe('Bearer keep-me');
    expect((await call('PUT', `/api/log-streams/${stream.id}`, { config: { url: 'http://plain.example' } })).status).toBe(400);

    expect((await call('DELETE', `/api/log-streams/${stream.id}`)).body).toEqual({ success: true });
    expect((await call('GET', `/api/log-streams/${stream.id}`)).status).toBe(404);
    // The first test's stream takes the same entry in the same fan-out: once it has it, the deleted one would have too.
    const afterDelete = await createUser();
    await vi.waitFor(() => expect(records(at(PATHS.webhook)).map((r) => r.resourceId)).toContain(afterDelete), WAIT);
    expect(records(at('/edited')).map((r) => r.resourceId)).not.toContain(afterDelete);
    // The name is free again.
    await createStream({ name: 'EDITED', type: 'WEBHOOK', config: { url: `${base()}/edited` } });
  });

  whenS3Reachable(() => {
    it('OBJECT_STORE writes one JSON object per entry under {prefix}YYYY/MM/DD/HH-mm-ss-<uuid>.json with the S3 client', async () => {
      const bucket = `iam-logs-${Date.now()}`;
      const credentials = { accessKeyId: 'test-key', secretAccessKey: 'test-secret-value' };
      const s3 = new S3Client({
        region: 'us-east-1',
        endpoint: s3Endpoint,
        forcePathStyle: true,
        // A copy: the SDK marks the object it is given.
        credentials: { ...credentials },
        requestHandler: new NodeHttpHandler({ httpsAgent: new Agent({ ca: readFileSync(s3CaFile, 'utf8') }) }),
      });
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      const stream = await createStream({
        name: 'archive',
        type: 'OBJECT_STORE',
        config: { bucket, region: 'us-east-1', ...credentials, prefix: 'audit/', endpoint: s3Endpoint, forcePathStyle: true },
        eventFilters: ['USER_CREATED'],
      });
      expect(stream.config).toMatchObject({ bucket, accessKeyId: 'test-key', secretAccessKey: '********', prefix: 'audit/' });
      const objects = async () => {
        const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
        return Promise.all(
          (listed.Contents ?? []).map(async ({ Key }) => ({ key: Key!, record: JSON.parse(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key }))).Body!.transformToString()) })),
        );
      };
      const [test] = await objects();
      expect(test!.key).toMatch(/^audit\/\d{4}\/\d{2}\/\d{2}\/\d{2}-\d{2}-\d{2}-[0-9a-f-]{36}\.json$/);
      expect(test!.record).toMatchObject({ action: 'LOG_STREAM_TEST', resourceId: stream.id });

      const userId = await createUser();
      await vi.waitFor(async () => expect((await objects()).map((o) => o.record.resourceId)).toContain(userId), WAIT);

      // Wrong credentials fail the creation's test delivery with the store's answer.
      const refused = await call('POST', '/api/log-streams', {
        name: 'archive-2',
        type: 'OBJECT_STORE',
        config: { bucket: `${bucket}-missing`, region: 'us-east-1', ...credentials, endpoint: s3Endpoint, forcePathStyle: true },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'TEST_DELIVERY_FAILED' });
      expect(refused.body.error.message).toMatch(/NoSuchBucket/);
    });
  });
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../support/service.ts';

/** A public address given as a literal: accepted without a DNS look-up, and never called (creation sends nothing). */
const PUBLIC_URL = 'https://93.184.216.34/hook';

/**
 * The service as deployed (IAM_ALLOW_PRIVATE_NETWORK_TARGETS unset): the API refuses every outbound
 * URL (webhook subscriptions, log-stream destinations) whose host is or resolves to a loopback,
 * private, link-local or metadata address, before anything is saved or sent. The client's checks
 * at every attempt, by a resolver a test controls and on redirects, are in
 * test/platform/outbound/https-client.int.test.ts.
 */
describe('outbound URLs that reach the internal network are refused by the API unless allowed', () => {
  let t: TestService;
  let token: string;
  const call = (method: string, url: string, body?: unknown) => t.request({ method, url, body, token, tenant: PLATFORM });
  const refused: [string, RegExp][] = [
    // `localhost` is resolved by the system's DNS: the refusal comes after resolution.
    ['https://localhost:8443/hook', /url: localhost resolves to a loopback address/],
    ['https://127.0.0.1/hook', /loopback/],
    ['https://[::1]/hook', /loopback/],
    ['https://[::ffff:127.0.0.1]/hook', /loopback/],
    ['https://10.1.2.3/hook', /private/],
    ['https://192.168.0.10/hook', /private/],
    ['https://169.254.10.10/hook', /link-local/],
    ['https://169.254.169.254/latest/meta-data', /metadata/],
  ];

  beforeAll(async () => {
    t = await startTestService({ env: { IAM_LOG_PLATFORM_A_URL: 'https://localhost:8443/api/v2/logs' } });
    token = await t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('webhooks: creation and a change of url answer 400 VALIDATION_ERROR naming the address kind; nothing is saved', async () => {
    for (const [url, reason] of refused) {
      const answer = await call('POST', '/api/webhooks', { name: 'internal', url, events: ['*'] });
      expect(answer.status, url).toBe(400);
      expect(answer.body.error, url).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(reason) });
    }
    expect((await call('GET', '/api/webhooks')).body.data).toEqual([]);

    const hook = await call('POST', '/api/webhooks', { name: 'public', url: PUBLIC_URL, events: ['*'] });
    expect(hook.status).toBe(201);
    for (const [url, reason] of refused) {
      const answer = await call('PUT', `/api/webhooks/${hook.body.data.id}`, { url });
      expect(answer.status, url).toBe(400);
      expect(answer.body.error.message, url).toMatch(reason);
    }
    expect((await call('GET', `/api/webhooks/${hook.body.data.id}`)).body.data.url).toBe(PUBLIC_URL);
  });

  it('log streams: every destination URL (WEBHOOK url, LOG_PLATFORM_B hecUrl, OBJECT_STORE endpoint, the LOG_PLATFORM_A intake) answers 400 VALIDATION_ERROR before any test delivery', async () => {
    const objectStore = { bucket: 'logs', region: 'us-east-1', accessKeyId: 'AKIA', secretAccessKey: 'secret' };
    const bodies: { name: string; type: string; config: Record<string, unknown> }[] = refused.flatMap(([url]) => [
      { name: 'internal', type: 'WEBHOOK', config: { url } },
      { name: 'internal', type: 'LOG_PLATFORM_B', config: { hecUrl: url, hecToken: 'token' } },
      { name: 'internal', type: 'OBJECT_STORE', config: { ...objectStore, endpoint: url, forcePathStyle: true } },
    ]);
    bodies.push({ name: 'internal', type: 'LOG_PLATFORM_A', config: { apiKey: 'key', region: 'eu1' } });
    for (const body of bodies) {
      const answer = await call('POST', '/api/log-streams', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      // A test delivery that had been attempted would answer TEST_DELIVERY_FAILED.
      expect(answer.body, JSON.stringify(body)).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR', message: expect.stringMatching(/resolves to a (loopback|private|link-local|metadata) address/) } });
    }
    expect((await call('GET', '/api/log-streams')).body.data).toEqual([]);
  });
});

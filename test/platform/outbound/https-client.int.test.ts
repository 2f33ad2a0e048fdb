import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HttpsClient, type HttpsClientOptions, type Resolver } from '../../../src/platform/outbound/https-client.ts';
import { RESOLVED_BY_TEST_ONLY, startHttpsReceiver, type HttpsReceiver } from '../../support/https-receiver.ts';

const body = JSON.stringify({ id: 'e1', type: 'test', timestamp: '2026-01-01T00:00:00.000Z', data: {} });

describe('outbound https client', () => {
  let receiver: HttpsReceiver;
  let caPem: string;
  const clients: HttpsClient[] = [];
  const client = (options: Partial<HttpsClientOptions> = {}) => {
    const created = new HttpsClient({ allowPrivateNetworks: true, timeoutMs: 5000, extraCaPem: caPem, ...options });
    clients.push(created);
    return created;
  };
  const post = (url: string, options?: Partial<HttpsClientOptions>) => client(options).post({ url, headers: { 'content-type': 'application/json' }, body });
  const resolvingTo = (address: string, family = 4): Resolver => async () => [{ address, family }];

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    caPem = readFileSync(receiver.caFile, 'utf8');
  });
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.answer({ status: 200, body: 'ok' });
  });
  afterAll(async () => {
    for (const created of clients) created.close();
    await receiver.close();
  });

  it('delivers to a trusted https receiver and reports the status and body', async () => {
    const result = await post(receiver.url);
    expect(result).toMatchObject({ ok: true, status: 200, body: 'ok', error: null });
    expect(receiver.requests.map((request) => request.body)).toEqual([body]);
  });

  it('refuses http URLs without sending anything', async () => {
    const result = await post(receiver.url.replace('https:', 'http:'));
    expect(result).toMatchObject({ ok: false, status: null, error: 'only https URLs are allowed' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses loopback by name and by address unless private targets are allowed', async () => {
    const port = receiver.port;
    for (const url of [receiver.url, `https://127.0.0.1:${port}/hook`, `https://[::1]:${port}/hook`, `https://[::ffff:127.0.0.1]:${port}/hook`]) {
      const result = await post(url, { allowPrivateNetworks: false });
      expect(result.ok, url).toBe(false);
      expect(result.error, url).toMatch(/resolves to a loopback address/);
    }
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses names that resolve to private, link-local, unique-local, CGNAT and metadata addresses', async () => {
    const cases: [string, number, RegExp][] = [
      ['10.0.0.7', 4, /private/],
      ['192.168.0.7', 4, /private/],
      ['172.20.0.7', 4, /private/],
      ['169.254.1.1', 4, /link-local/],
      ['fe80::7', 6, /link-local/],
      ['fd12::7', 6, /unique-local/],
      ['100.64.1.1', 4, /CGNAT/],
      ['169.254.169.254', 4, /metadata/],
      ['fd00:ec2::254', 6, /metadata/],
    ];
    for (const [address, family, reason] of cases) {
      const result = await post('https://innocent.example/hook', { allowPrivateNetworks: false, resolve: resolvingTo(address, family) });
      expect(result.error, address).toMatch(reason);
    }
  });

  it('refuses metadata addresses even when private targets are allowed, and a name with any refused address', async () => {
    expect((await post('https://169.254.169.254/latest/meta-data')).error).toMatch(/metadata/);
    const mixed: Resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ];
    expect((await post('https://innocent.example/hook', { resolve: mixed })).error).toMatch(/metadata/);
  });

  it('connects to the address it checked: the name is resolved once, so a rebinding DNS cannot swap it', async () => {
    // Only this resolver knows the name (the system's DNS does not): success means the connection used its answer.
    const answers = ['127.0.0.1', '169.254.169.254'];
    let lookups = 0;
    const rebinding: Resolver = async () => [{ address: answers[Math.min(lookups++, 1)]!, family: 4 }];
    const result = await post(`https://${RESOLVED_BY_TEST_ONLY}:${receiver.port}/hook`, { resolve: rebinding });
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(lookups).toBe(1);
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    receiver.answer({ status: 302, headers: { location: `https://localhost:${receiver.port}/elsewhere` } });
    const result = await post(receiver.url);
    expect(result).toMatchObject({ ok: false, status: 302, error: 'redirect (302) not followed' });
    expect(receiver.requests).toHaveLength(1);
  });

  it('reads at most 1 KB of an endless answer', async () => {
    receiver.answer('endless');
    const result = await post(receiver.url);
    expect(result.ok).toBe(true);
    expect(result.body).toHaveLength(1024);
  });

  it('gives up on a receiver that never answers after the timeout', async () => {
    receiver.answer('hang');
    const result = await post(receiver.url, { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, status: null, error: 'no answer within 300 ms' });
  });

  it('fails on oversized response headers and on an untrusted certificate', async () => {
    receiver.answer({ status: 200, headers: { 'x-padding': 'x'.repeat(20_000) } });
    expect((await post(receiver.url)).error).toMatch(/header/i);
    receiver.answer({ status: 200 });
    expect((await post(receiver.url, { extraCaPem: undefined })).error).toMatch(/self.signed/i);
  });

  it('fails, bounded, on an answer with 10,000 headers', async () => {
    receiver.answer({ status: 200, headers: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`x-h${i}`, '1'])) });
    const result = await post(receiver.url);
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/header/i);
  });

  it('pipelines requests on a keep-alive connection that answered once; one left unanswered fails those written behind it, bounded', async () => {
    const pipelining = client({ maxSockets: 1, timeoutMs: 1000 });
    const send = () => pipelining.post({ url: receiver.url, headers: { 'content-type': 'application/json' }, body });
    const accepted = receiver.connections.accepted;
    expect((await send()).ok).toBe(true);
    let answered = 0;
    receiver.answer(() => (answered++ === 0 ? 'hang' : { status: 200, body: 'ok' }));
    const [hung, ...behind] = await Promise.all([send(), send(), send()]);
    expect(hung).toMatchObject({ ok: false, status: null, error: 'no answer within 1000 ms' });
    expect(behind.map((result) => result.error)).toEqual(Array(2).fill('the connection was closed: a request written before this one was given up'));
    // All three went out on the one connection before the first was answered.
    expect(receiver.requests).toHaveLength(4);
    expect(receiver.connections.accepted - accepted).toBe(1);
    // The next request takes a new connection.
    expect((await send()).ok).toBe(true);
    expect(receiver.connections.accepted - accepted).toBe(2);
  });

  it('sends one request at a time on each connection of a receiver that closes them after each answer', async () => {
    receiver.answer({ status: 200, body: 'ok', headers: { connection: 'close' } });
    const closing = client({ maxSockets: 2 });
    const accepted = receiver.connections.accepted;
    const results = await Promise.all(Array.from({ length: 6 }, () => closing.post({ url: receiver.url, headers: {}, body })));
    expect(results.map((result) => result.ok)).toEqual(Array(6).fill(true));
    expect(receiver.requests).toHaveLength(6);
    expect(receiver.connections.accepted - accepted).toBe(6);
  });

  it('refuses headers that would change the framing or inject lines, without sending anything', async () => {
    const sending = client();
    // A name sent once is checked as sendable once; its values still are at every request.
    expect((await sending.post({ url: receiver.url, headers: { 'x-evil': 'fine' }, body })).ok).toBe(true);
    receiver.requests.length = 0;
    const refused = await Promise.all([
      sending.post({ url: receiver.url, headers: { 'content-length': '1' }, body }),
      sending.post({ url: receiver.url, headers: { 'x-evil': 'a\r\nx-injected: 1' }, body }),
      sending.post({ url: receiver.url, headers: { 'bad name': 'x' }, body }),
    ]);
    expect(refused.map((result) => result.ok)).toEqual([false, false, false]);
    expect(receiver.requests).toHaveLength(0);
  });

  it('guards the connections of protocol clients too: their agent refuses internal and metadata addresses at connect time', async () => {
    const get = (url: string, agentOf: HttpsClient) =>
      new Promise<string>((resolve) => {
        httpsRequest(url, { agent: agentOf.guardedAgent() }, (response) => {
          response.resume();
          resolve(String(response.statusCode));
        })
          .on('error', (error) => resolve(error.message))
          .end();
      });
    expect(await get(receiver.url, client())).toBe('200');
    expect(await get(receiver.url, client({ allowPrivateNetworks: false }))).toMatch(/resolves to a loopback address/);
    expect(await get(`https://${RESOLVED_BY_TEST_ONLY}:${receiver.port}/hook`, client({ resolve: resolvingTo('169.254.169.254') }))).toMatch(/metadata/);
  });
});

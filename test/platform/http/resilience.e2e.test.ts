import { once } from 'node:events';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

/** A raw client: writes what it is told, collects what the server sends until it closes. */
function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  socket.on('error', () => undefined);
  return { write: (text: string) => socket.write(text), closed, received: () => received, destroy: () => socket.destroy() };
}

const statusOf = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);
const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

describe('HTTP resilience: timeouts, header and body limits, graceful shutdown', () => {
  let t: TestService;
  let port: number;
  let admin: string;

  beforeAll(async () => {
    t = await startTestService({
      env: {
        HTTP_REQUEST_TIMEOUT_MS: '800',
        HTTP_HEADERS_TIMEOUT_MS: '200',
        HTTP_RECEIVE_TIMEOUT_MS: '400',
        HTTP_MAX_HEADER_BYTES: '4096',
        HTTP_BODY_LIMIT: '2048',
        READ_YOUR_WRITES_TIMEOUT_MS: '3000',
      },
    });
    await t.service.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.service.app.server.address() as AddressInfo).port;
    admin = await t.token({ sub: 'admin-1', tenant: PLATFORM, roles: ['admin'] });
  });
  afterAll(async () => t?.close());

  const url = (path: string) => `http://127.0.0.1:${port}${path}`;

  it('cuts off a client that never finishes its headers (408), and one that trickles its body', async () => {
    const headers = rawConnection(port);
    headers.write('GET /health/live HTTP/1.1\r\nHost: iam.test\r\nX-Slow: ');
    const cutOff = await headers.closed;
    expect([statusOf(cutOff), bodyOf(cutOff).error.code]).toEqual([408, 'CLIENT_TIMEOUT']);

    const body = rawConnection(port);
    body.write(`POST /api/auth/login HTTP/1.1\r\nHost: iam.test\r\nx-tenant: ${PLATFORM}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"email":`);
    expect(statusOf(await body.closed)).toBe(408);
  });

  it('refuses oversized or countless headers with 431, and keeps serving', async () => {
    const big = await fetch(url('/health/live'), { headers: { 'x-big': 'a'.repeat(8000) } });
    expect(big.status).toBe(431);
    // Answered before any route is known, in the error body every route documents for 431.
    expect(await big.json()).toEqual({ ok: false, error: { code: 'HEADERS_TOO_LARGE', message: expect.any(String), details: [] } });
    const longUrl = await fetch(url(`/api/logs/audit?action=${'a'.repeat(8000)}`), { headers: { authorization: `Bearer ${admin}`, 'x-tenant': PLATFORM } });
    expect(longUrl.status).toBe(431);
    const documented = (await t.request({ method: 'GET', url: '/api/openapi.json' })).body.paths['/api/logs/audit'].get.responses['431'];
    expect(documented.description).toContain('HEADERS_TOO_LARGE');
    const many = rawConnection(port);
    many.write(`GET /health/live HTTP/1.1\r\nHost: iam.test\r\n${Array.from({ length: 10_000 }, (_, i) => `x-h${i}: v\r\n`).join('')}\r\n`);
    expect(statusOf(await many.closed)).toBe(431);
    expect((await fetch(url('/health/live'))).status).toBe(200);
  });

  it('applies the body limit to JSON and form bodies alike, and refuses other types with 415', async () => {
    const json = await fetch(url('/api/auth/login'), {
      method: 'POST',
      headers: { 'x-tenant': PLATFORM, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@b.test', password: 'x'.repeat(5000) }),
    });
    expect(json.status).toBe(413);
    expect(await json.json()).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE' } });

    const form = await fetch(url('/api/auth/token'), {
      method: 'POST',
      headers: { 'x-tenant': PLATFORM, 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=${'y'.repeat(5000)}`,
    });
    expect(form.status).toBe(413);
    expect(await form.json()).toMatchObject({ error: 'invalid_request' });

    for (const type of ['text/plain', 'multipart/form-data; boundary=x', 'application/xml']) {
      const other = await fetch(url('/api/auth/login'), { method: 'POST', headers: { 'x-tenant': PLATFORM, 'content-type': type }, body: '{"email":"a@b.test"}' });
      expect(other.status, type).toBe(415);
      expect(await other.json()).toMatchObject({ ok: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    }
  });

  it('answers 503 REQUEST_TIMEOUT in the route envelope when processing outlives the request timeout', async () => {
    // A check that must wait for a written position its index, stopped, does not reach within the request timeout.
    await t.service.fga.indexes.stop();
    const written = await t.request({ method: 'POST', url: '/api/roles', tenant: PLATFORM, token: admin, body: { name: 'slow-check' } });
    expect(written.status).toBe(201);
    const consistencyToken = String(await t.store.lastWrittenPosition());
    const response = await fetch(url('/api/fga/check'), {
      method: 'POST',
      headers: { 'x-tenant': PLATFORM, authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ objectType: 'document', objectId: 'd1', relation: 'viewer', subjectType: 'user', subjectId: 'u1', consistencyToken }),
    }).finally(() => t.service.fga.indexes.start());
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ ok: false, error: { code: 'REQUEST_TIMEOUT' } });
    expect((await fetch(url('/health/live'))).status).toBe(200);
  });
});

describe('graceful shutdown (default limits)', () => {
  it('stopping the service (what SIGTERM does) lets a write whose handler is running finish, answer and stay written', async () => {
    const first = await startTestService();
    let stopped = false;
    try {
      await first.service.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (first.service.app.server.address() as AddressInfo).port;
      const admin = await first.token({ sub: 'admin-1', tenant: PLATFORM, roles: ['admin'] });
      const handling = new Promise<void>((resolve) => first.service.app.server.once('request', () => resolve()));
      // Creating a user hashes its password (argon2id) and appends: the handler is busy when the stop begins.
      const write = fetch(`http://127.0.0.1:${port}/api/users`, {
        method: 'POST',
        headers: { 'x-tenant': PLATFORM, authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'in-flight@p.test', password: 'In-Fl1ght-Password' }),
      });
      await handling;
      const stopping = first.service.stop();
      const answer = await write;
      expect([answer.status, ((await answer.json()) as { data: { email: string } }).data.email]).toEqual([201, 'in-flight@p.test']);
      await stopping;
      stopped = true;
      await first.store.close();

      const second = await startTestService({ db: first.db });
      try {
        const users = await second.request({ method: 'GET', url: '/api/users?search=in-flight', tenant: PLATFORM, token: await second.token({ sub: 'admin-1', tenant: PLATFORM, roles: ['admin'] }) });
        expect(users.body.data.data.map((user: { email: string }) => user.email)).toEqual(['in-flight@p.test']);
      } finally {
        await second.close();
      }
    } finally {
      if (!stopped) await first.close();
      await first.db.drop();
    }
  });

  it('finishes a request in flight when the service stops, then refuses new connections', async () => {
    const t = await startTestService();
    try {
      await t.service.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (t.service.app.server.address() as AddressInfo).port;
      const inFlight = rawConnection(port);
      const body = JSON.stringify({ email: 'nobody@iam.test', password: 'wrong-password-1' });
      // In flight once the server has parsed its headers (a fixed pause raced a busy event loop).
      const received = once(t.service.app.server, 'request');
      inFlight.write(`POST /api/auth/login HTTP/1.1\r\nHost: iam.test\r\nx-tenant: ${PLATFORM}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
      await received;
      const stopping = t.service.app.close();
      inFlight.write(body.slice(10));
      await stopping;
      const answer = await inFlight.closed;
      expect(statusOf(answer)).toBe(401);
      expect(bodyOf(answer)).toMatchObject({ ok: false, error: { code: 'INVALID_CREDENTIALS' } });
      await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
    } finally {
      await t.close();
    }
  });
});

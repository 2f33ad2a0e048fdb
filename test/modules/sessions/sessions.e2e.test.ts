import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sessionStreamId } from '../../../src/modules/sessions/events.ts';
import { ManualClock } from '../../../src/platform/clock.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

describe('sessions, logout and the refresh-token grant', () => {
  let t: TestService;
  // Minted per call: the test moves the clock past access-token lifetimes.
  const adminToken = () => t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  let userId: string;
  const clock = new ManualClock(new Date());
  const login = async (userAgent = CHROME_MAC) =>
    (await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: 'jo@p.test', password: 'Jo-Passw0rd' }, headers: { 'user-agent': userAgent } })).body.data;
  const refresh = (refreshToken: string, form = false) =>
    t.request({
      method: 'POST',
      url: '/api/auth/token',
      tenant: PLATFORM,
      ...(form
        ? { body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } }
        : { body: { grant_type: 'refresh_token', refresh_token: refreshToken } }),
    });
  const adminSessions = async (query = '') => (await t.request({ method: 'GET', url: `/api/admin/sessions${query}`, tenant: PLATFORM, token: await adminToken() })).body;

  beforeAll(async () => {
    t = await startTestService({ clock });
    userId = (await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: await adminToken(), body: { email: 'jo@p.test', password: 'Jo-Passw0rd', firstName: 'Jo' } })).body.data.id;
  });
  afterAll(() => t.close());

  it('lists sessions flat with device, user, pagination and stats; single read is 405', async () => {
    const session = await login();
    const body = await adminSessions(`?userId=${userId}`);
    expect(Object.keys(body).sort()).toEqual(['pagination', 'sessions', 'stats']);
    expect(body.sessions[0]).toMatchObject({
      id: session.sessionId,
      tenantId: PLATFORM,
      userId,
      userAgent: CHROME_MAC,
      device: 'Chrome 120 on macOS Catalina',
      revoked: false,
      user: { email: 'jo@p.test', firstName: 'Jo', lastName: null },
    });
    expect(body.stats).toEqual({ active: expect.any(Number), last24h: expect.any(Number) });
    expect(body.pagination).toMatchObject({ page: 1, limit: 20 });
    expect(await adminSessions('?userId=not-a-uuid')).toMatchObject({ sessions: [], pagination: { total: 0 } });
    expect((await t.request({ method: 'GET', url: '/api/admin/sessions?limit=51', tenant: PLATFORM, token: await adminToken() })).status).toBe(400);
    expect((await t.request({ method: 'GET', url: `/api/admin/sessions/${session.sessionId}`, tenant: PLATFORM, token: await adminToken() })).status).toBe(405);
  });

  it('rotates refresh tokens (JSON and form) and revokes the session when an old one is reused', async () => {
    const session = await login();
    const first = await refresh(session.refreshToken);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 900, refresh_token: expect.any(String) });
    expect(first.headers['cache-control']).toBe('no-store');
    const second = await refresh(first.body.refresh_token, true);
    expect(second.status).toBe(200);
    const reuse = await refresh(session.refreshToken);
    expect(reuse.status).toBe(400);
    expect(reuse.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    // The whole session is gone: even the newest refresh token fails now.
    expect((await refresh(second.body.refresh_token)).body.error).toBe('invalid_grant');
    const listed = (await adminSessions(`?userId=${userId}&status=revoked`)).sessions.map((s: { id: string }) => s.id);
    expect(listed).toContain(session.sessionId);
  });

  it('a rotation on a session this instance started or rotated is one append, recorded without device data; a reuse revocation keeps it', async () => {
    const session = await login();
    const streamId = sessionStreamId(PLATFORM, session.sessionId);
    const fromChrome = (refreshToken: string) =>
      t.request({ method: 'POST', url: '/api/auth/token', tenant: PLATFORM, body: { grant_type: 'refresh_token', refresh_token: refreshToken }, headers: { 'user-agent': CHROME_MAC } });
    const reads = vi.spyOn(t.store, 'readStream');
    const appends = vi.spyOn(t.store, 'appendMulti');
    let latest = session.refreshToken as string;
    try {
      for (const revision of [0n, 1n]) {
        const rotated = await fromChrome(latest);
        expect(rotated.status).toBe(200);
        latest = rotated.body.refresh_token;
        // One round trip: no read of the session's stream, one append expecting the revision this instance knows.
        expect(reads.mock.calls.filter(([id]) => id === streamId)).toEqual([]);
        expect(appends.mock.calls.filter(([members]) => members.some((member) => member.streamId === streamId)).at(-1)).toEqual([
          [expect.objectContaining({ streamId, expectedRevision: revision })],
        ]);
      }
    } finally {
      reads.mockRestore();
      appends.mockRestore();
    }
    expect((await fromChrome(session.refreshToken)).body.error).toBe('invalid_grant');
    const events = await t.events.readStream(streamId);
    expect(events.map((e) => [e.type, e.metadata.userAgent, e.metadata.clientIp === null])).toEqual([
      ['SessionStarted', CHROME_MAC, false],
      ['SessionRefreshed', null, true],
      ['SessionRefreshed', null, true],
      ['SessionRevoked', CHROME_MAC, false],
    ]);
    expect(events.every((e) => typeof e.metadata.correlationId === 'string')).toBe(true);
  });

  it('token endpoint errors follow RFC 6749', async () => {
    expect((await t.request({ method: 'POST', url: '/api/auth/token', tenant: PLATFORM, body: { grant_type: 'password' } })).body).toEqual({
      error: 'unsupported_grant_type',
      error_description: expect.any(String),
    });
    expect((await t.request({ method: 'POST', url: '/api/auth/token', tenant: PLATFORM, body: { grant_type: 'refresh_token' } })).body.error).toBe('invalid_request');
    expect((await refresh('garbage')).body.error).toBe('invalid_grant');
  });

  it('logout and admin revocation invalidate the refresh token at once; repeated revocation succeeds', async () => {
    const a = await login();
    expect((await t.request({ method: 'POST', url: '/api/auth/logout', tenant: PLATFORM, token: a.accessToken })).body).toEqual({ ok: true, data: { loggedOut: true } });
    expect((await refresh(a.refreshToken)).body.error).toBe('invalid_grant');
    // The access token stays valid until it expires (spec).
    expect((await t.request({ method: 'GET', url: '/api/user/security/sessions', tenant: PLATFORM, token: a.accessToken })).status).toBe(200);

    const b = await login();
    const del = async () => t.request({ method: 'DELETE', url: `/api/admin/sessions/${b.sessionId}`, tenant: PLATFORM, token: await adminToken() });
    expect((await del()).body).toEqual({ success: true });
    expect((await del()).body).toEqual({ success: true });
    expect((await refresh(b.refreshToken)).body.error).toBe('invalid_grant');
    const unknown = await t.request({ method: 'DELETE', url: '/api/admin/sessions/0190f0f0-0000-7000-8000-000000000000', tenant: PLATFORM, token: await adminToken() });
    // Errors keep the route's family: {success: false, error}.
    expect([unknown.status, unknown.body]).toEqual([404, { success: false, error: { code: 'NOT_FOUND', message: 'Session not found' } }]);
    const forbidden = await t.request({ method: 'DELETE', url: `/api/admin/sessions/${b.sessionId}`, tenant: PLATFORM, token: await t.token({ sub: 'u', tenant: PLATFORM, roles: ['user'] }) });
    expect([forbidden.status, forbidden.body.success, forbidden.body.error.code]).toEqual([403, false, 'PERMISSION_DENIED']);
  });

  it('a user sees and revokes only their own sessions', async () => {
    const mine = await login();
    const own = await t.request({ method: 'GET', url: '/api/user/security/sessions', tenant: PLATFORM, token: mine.accessToken });
    expect(own.body.data.data.every((s: { userId: string }) => s.userId === userId)).toBe(true);
    expect(own.body.data.data.find((s: { id: string }) => s.id === mine.sessionId).current).toBe(true);
    const someoneElse = await t.token({ sub: 'other-user', tenant: PLATFORM, roles: ['user'] });
    expect((await t.request({ method: 'DELETE', url: `/api/user/security/sessions/${mine.sessionId}`, tenant: PLATFORM, token: someoneElse })).status).toBe(404);
    expect((await t.request({ method: 'DELETE', url: `/api/user/security/sessions/${mine.sessionId}`, tenant: PLATFORM, token: mine.accessToken })).body).toEqual({ ok: true, data: { revoked: true } });
  });

  it('revokes the oldest session when maxConcurrentSessions is reached', async () => {
    await t.request({ method: 'PUT', url: '/api/realm-settings', tenant: PLATFORM, token: await adminToken(), body: { section: 'login', data: { maxConcurrentSessions: 2 } } });
    const sessions = [];
    for (let i = 0; i < 3; i += 1) sessions.push(await login());
    const active = (await adminSessions(`?userId=${userId}&status=active`)).sessions.map((s: { id: string }) => s.id);
    expect(active.sort()).toEqual([sessions[1].sessionId, sessions[2].sessionId].sort());
    expect((await refresh(sessions[0].refreshToken)).body.error).toBe('invalid_grant');
  });

  it('expires idle sessions: the read model stops showing them active and refresh fails', async () => {
    const session = await login();
    clock.advance(3601_000);
    expect((await refresh(session.refreshToken)).body.error).toBe('invalid_grant');
    const listed = (await adminSessions(`?userId=${userId}`)).sessions.find((s: { id: string }) => s.id === session.sessionId);
    expect(listed.status).toBe('expired');
    expect((await adminSessions(`?userId=${userId}&status=active`)).sessions.map((s: { id: string }) => s.id)).not.toContain(session.sessionId);
  });

  it('API requests count as activity: updatedAt moves and the idle limit counts from the last use', async () => {
    const session = await login();
    const ownSessions = () => t.request({ method: 'GET', url: '/api/user/security/sessions', tenant: PLATFORM, token: session.accessToken });
    clock.advance(600_000);
    expect((await ownSessions()).status).toBe(200);
    await t.service.background.drain();
    const used = await t.db.pool.query("select data from events where type = 'SessionUsed' and data->>'sessionId' = $1", [session.sessionId]);
    expect(used.rows).toHaveLength(1);
    expect((await ownSessions()).status).toBe(200); // within a minute of the last record: no new event
    await t.service.background.drain();
    expect((await t.db.pool.query("select 1 from events where type = 'SessionUsed' and data->>'sessionId' = $1", [session.sessionId])).rows).toHaveLength(1);
    const listed = async () => (await adminSessions(`?userId=${userId}`)).sessions.find((s: { id: string }) => s.id === session.sessionId);
    await expect.poll(async () => (await listed()).updatedAt).toBe(clock.now().toISOString());
    clock.advance(3300_000); // 65 minutes after login, 55 after the last use
    expect((await listed()).status).toBe('active');
    expect((await refresh(session.refreshToken)).status).toBe(200);
  });

  it('deleting a user ends their sessions at once', async () => {
    const session = await login();
    await t.request({ method: 'DELETE', url: `/api/users/${userId}`, tenant: PLATFORM, token: await adminToken() });
    expect((await refresh(session.refreshToken)).body.error).toBe('invalid_grant');
    expect((await adminSessions(`?userId=${userId}&status=active`)).sessions).toEqual([]);
  });
});

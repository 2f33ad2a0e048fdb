import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/platform/clock.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

describe('a refresh grant answers from the session stream, not the sessions read model', () => {
  let t: TestService;
  const clock = new ManualClock(new Date());
  const adminToken = () => t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  const warnings: string[] = [];

  beforeAll(async () => {
    // A refresh that waited for the held projection would answer only at the bound, with a warning.
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
    t = await startTestService({ clock, logger, env: { READ_YOUR_WRITES_TIMEOUT_MS: '30000' } });
    await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: await adminToken(), body: { email: 'ro@p.test', password: 'Ro-Passw0rd' } });
  });
  afterAll(() => t.close());

  it('answers while the sessions projection is held; the next read of the read model waits for the refresh', async () => {
    const session = (await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: 'ro@p.test', password: 'Ro-Passw0rd' } })).body.data;
    clock.advance(60_000);
    // Holding the projection's checkpoint row stops it before it can apply anything.
    const held = await t.db.pool.connect();
    await held.query('begin');
    await held.query("select 1 from projection_checkpoints where name = 'sessions' for update");
    let listed: Promise<{ updatedAt: string } | undefined> | undefined;
    try {
      const rotated = await t.request({ method: 'POST', url: '/api/auth/token', tenant: PLATFORM, body: { grant_type: 'refresh_token', refresh_token: session.refreshToken } });
      expect(rotated.status).toBe(200);
      expect(warnings).not.toContain('read models lag behind a write');
      listed = adminSession(session.sessionId);
    } finally {
      await held.query('commit');
      held.release();
    }
    // Read-your-writes through this instance: the listing waited until the projection applied the refresh.
    expect((await listed)?.updatedAt).toBe(clock.now().toISOString());
  });

  const adminSession = async (sessionId: string) => {
    const body = (await t.request({ method: 'GET', url: '/api/admin/sessions', tenant: PLATFORM, token: await adminToken() })).body;
    return (body.sessions as { id: string; updatedAt: string }[]).find((s) => s.id === sessionId);
  };
});

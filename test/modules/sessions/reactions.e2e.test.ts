import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionStreamId, type SessionStarted } from '../../../src/modules/sessions/events.ts';
import { newId } from '../../../src/platform/ids.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

describe('session reactions: a deleted user keeps no session', () => {
  let t: TestService;
  const admin = () => t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  const createUser = async (email: string) =>
    (await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: await admin(), body: { email, password: 'Jo-Passw0rd' } })).body.data.id as string;
  const login = async (email: string) => (await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email, password: 'Jo-Passw0rd' } })).body.data;
  /** Waits for the reactions to `position` and for the sessions read model to show what they did. */
  const reacted = async (position: bigint) => {
    const caused = await t.service.reactions.waitFor(position, 5000);
    expect(caused).not.toBeNull();
    expect(await t.service.runner.waitFor(caused!, 5000, ['sessions'])).toBe(true);
  };
  const sessionEvents = async (sessionId: string) => t.store.readStream(sessionStreamId(PLATFORM, sessionId));

  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it('DELETE /api/users/{id} answers once every session of the user is revoked, by the system, caused by the deletion', async () => {
    const userId = await createUser('ann@p.test');
    const sessions = [await login('ann@p.test'), await login('ann@p.test')];
    expect((await t.request({ method: 'DELETE', url: `/api/users/${userId}`, tenant: PLATFORM, token: await admin() })).status).toBe(200);
    const listed = await t.request({ method: 'GET', url: `/api/admin/sessions?userId=${userId}`, tenant: PLATFORM, token: await admin() });
    expect(listed.body.sessions.map((s: { status: string }) => s.status)).toEqual(['revoked', 'revoked']);
    const [deleted] = (await t.db.pool.query<{ event_id: string }>("select event_id from events where type = 'UserDeleted' and data->>'userId' = $1", [userId])).rows;
    for (const session of sessions) {
      const revoked = (await sessionEvents(session.sessionId)).at(-1)!;
      expect(revoked).toMatchObject({ type: 'SessionRevoked', data: { reason: 'user_deleted' }, metadata: { actor: 'system', causationId: deleted!.event_id, tenantId: PLATFORM } });
    }
  });

  it('revokes a session started after the deletion by a login that read the user just before it', async () => {
    const userId = await createUser('ben@p.test');
    // A login and its reaction, then userinfo: the instance's cached view of ben is warm before the deletion.
    const { accessToken } = await login('ben@p.test');
    expect((await t.request({ method: 'GET', url: '/api/auth/validate', tenant: PLATFORM, token: accessToken })).status).toBe(200);
    const deletion = await t.request({ method: 'DELETE', url: `/api/users/${userId}`, tenant: PLATFORM, token: await admin() });
    expect(deletion.status).toBe(200);
    // The racing login's append lands after the deletion: the UserDeleted reaction could not see it.
    const sessionId = newId();
    const now = new Date().toISOString();
    const started: SessionStarted = {
      type: 'SessionStarted',
      data: {
        sessionId, userId, startedAt: now, refreshTokenHash: 'h', refreshExpiresAt: now, ipAddress: null, userAgent: null,
        expiresAt: new Date(Date.now() + 3600_000).toISOString(), idleTimeoutSeconds: 3600, refreshTokenLifetimeSeconds: 3600, acr: 'aal1', amr: ['pwd'],
      },
    };
    const { position } = await t.store.append(sessionStreamId(PLATFORM, sessionId), [{ id: newId(), ...started, metadata: { tenantId: PLATFORM, actor: userId, occurredAt: now } }], 'no_stream');
    await reacted(position);
    expect((await sessionEvents(sessionId)).map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([['SessionStarted', undefined], ['SessionRevoked', 'user_deleted']]);
  });

  it('lets the session streams decide, not the read model: a row revoked by the old projection code still gets its event', async () => {
    const userId = await createUser('dan@p.test');
    const session = await login('dan@p.test');
    // What the sessions projection used to write on UserDeleted, with no event behind it.
    await t.db.pool.query("update sessions set revoked = true, revoked_reason = 'user_deleted' where id = $1", [session.sessionId]);
    expect((await t.request({ method: 'DELETE', url: `/api/users/${userId}`, tenant: PLATFORM, token: await admin() })).status).toBe(200);
    expect((await sessionEvents(session.sessionId)).map((e) => e.type)).toEqual(['SessionStarted', 'SessionRevoked']);
  });

  it('leaves the sessions of live users alone and shows its lag as a metric', async () => {
    await createUser('cy@p.test');
    const session = await login('cy@p.test');
    await reacted(await t.store.lastWrittenPosition());
    expect((await sessionEvents(session.sessionId)).map((e) => e.type)).toEqual(['SessionStarted']);
    const metrics = (await t.request({ method: 'GET', url: '/metrics' })).body as string;
    expect(metrics).toMatch(/iam_reaction_lag_events\{reaction="session-revocations"\} \d+/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionStreamId, type SessionStarted } from '../../../src/modules/sessions/events.ts';
import { userStreamId } from '../../../src/modules/users/index.ts';
import { newId } from '../../../src/platform/ids.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

describe('session reactions: a deleted user keeps no session, a changed password only the session it was changed from', () => {
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
  const endings = async (sessionId: string) => (await sessionEvents(sessionId)).map((e) => [e.type, (e.data as { reason?: string }).reason]);
  /** A session of the user as a login that checked password `passwordVersion` would start it, appended directly (the race, made certain). */
  const startSession = async (userId: string, passwordVersion: number) => {
    const sessionId = newId();
    const now = new Date().toISOString();
    const started: SessionStarted = {
      type: 'SessionStarted',
      data: {
        sessionId, userId, startedAt: now, refreshTokenHash: 'h', refreshExpiresAt: now, ipAddress: null, userAgent: null,
        expiresAt: new Date(Date.now() + 3600_000).toISOString(), idleTimeoutSeconds: 3600, refreshTokenLifetimeSeconds: 3600, acr: 'aal1', amr: ['pwd'], passwordVersion,
      },
    };
    const { position } = await t.store.append(sessionStreamId(PLATFORM, sessionId), [{ id: newId(), ...started, metadata: { tenantId: PLATFORM, actor: userId, occurredAt: now } }], 'no_stream');
    return { sessionId, position };
  };

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
    const { sessionId, position } = await startSession(userId, 0);
    await reacted(position);
    expect(await endings(sessionId)).toEqual([['SessionStarted', undefined], ['SessionRevoked', 'user_deleted']]);
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

  it('revokes a session started after a password change by a login that checked the password before it', async () => {
    const userId = await createUser('eve@p.test');
    const { accessToken, sessionId: kept } = await login('eve@p.test');
    const change = await t.request({ method: 'POST', url: '/api/auth/change-password', tenant: PLATFORM, token: accessToken, body: { currentPassword: 'Jo-Passw0rd', newPassword: 'Eve-Passw0rd2' } });
    expect(change.status).toBe(200);
    // The racing login checked version 0 (the old password); its session lands after the change.
    const racing = await startSession(userId, 0);
    // A login with the new password, after the change: version 1.
    const fresh = await startSession(userId, 1);
    await reacted(fresh.position > racing.position ? fresh.position : racing.position);
    expect(await endings(racing.sessionId)).toEqual([['SessionStarted', undefined], ['SessionRevoked', 'password_change']]);
    expect(await endings(fresh.sessionId)).toEqual([['SessionStarted', undefined]]);
    // The session the change was made from stays (its request recorded a SessionUsed, nothing ended it).
    expect((await endings(kept)).map(([type]) => type)).not.toContain('SessionRevoked');
  });

  it('a change ends, by its reaction, a session its own revocation did not see, and keeps the one it was made from and those of the new password', async () => {
    const userId = await createUser('fay@p.test');
    const kept = await startSession(userId, 0);
    const unseen = await startSession(userId, 0);
    const fresh = await startSession(userId, 1);
    await reacted(fresh.position);
    // A change whose own revocation missed `unseen` (the read model had not shown it): appended without one.
    const revision = BigInt((await t.store.readStream(userStreamId(PLATFORM, userId))).length - 1);
    const now = new Date().toISOString();
    const changed = { type: 'UserPasswordChanged', data: { userId, passwordHash: 'h', reason: 'change', keptSessionId: kept.sessionId } };
    const { position } = await t.store.append(userStreamId(PLATFORM, userId), [{ id: newId(), ...changed, metadata: { tenantId: PLATFORM, actor: userId, occurredAt: now } }], revision);
    await reacted(position);
    expect(await endings(unseen.sessionId)).toEqual([['SessionStarted', undefined], ['SessionRevoked', 'password_change']]);
    expect(await endings(kept.sessionId)).toEqual([['SessionStarted', undefined]]);
    expect(await endings(fresh.sessionId)).toEqual([['SessionStarted', undefined]]);
  });
});

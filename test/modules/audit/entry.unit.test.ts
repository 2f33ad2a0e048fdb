import { describe, expect, it } from 'vitest';
import { auditEntryOf } from '../../../src/modules/audit/entry.ts';
import type { RecordedEvent } from '../../../src/platform/eventstore/port.ts';

const recorded = (type: string, data: unknown, actor = 'system'): RecordedEvent => ({
  id: '0190a000-0000-7000-8000-000000000001',
  type,
  data,
  streamId: 'x-acme.1',
  revision: 0n,
  position: 1n,
  metadata: { tenantId: 'acme', actor, clientIp: '198.51.100.1', userAgent: 'ua', occurredAt: '2026-01-01T00:00:00.000Z' },
});

describe('auditEntryOf', () => {
  it('a login refused on a locked account is LOGIN failure ACCOUNT_LOCKED by the account, whoever the metadata names', () => {
    const { entry } = auditEntryOf(recorded('LoginFailed', { userId: 'u1', reason: 'locked' }, 'anonymous'), null)!;
    expect(entry).toMatchObject({ action: 'LOGIN', status: 'failure', errorCode: 'ACCOUNT_LOCKED', userId: 'u1', resource: 'user', resourceId: 'u1' });
  });

  it('system events have a null userId; a session ended by logout is LOGOUT, by a reaction SESSION_REVOKED with its reason', () => {
    const logout = auditEntryOf(recorded('SessionRevoked', { sessionId: 's1', userId: 'u1', reason: 'logout' }, 'u1'), null)!.entry;
    expect(logout).toMatchObject({ action: 'LOGOUT', userId: 'u1', resource: 'session', resourceId: 's1' });
    const reaction = auditEntryOf(recorded('SessionRevoked', { sessionId: 's1', userId: 'u1', reason: 'user_deleted' }), null)!.entry;
    expect(reaction).toMatchObject({ action: 'SESSION_REVOKED', userId: null, metadata: { userId: 'u1', reason: 'user_deleted' } });
  });

  it('a role removed because the role was deleted says so, and the summary loses the role', () => {
    const before = { email: 'a@b.c', roles: ['admin', 'user'] };
    const audited = auditEntryOf(recorded('UserRoleRemoved', { userId: 'u1', role: { id: 'r1', name: 'admin' }, reason: 'role_deleted' }), before)!;
    expect(audited.entry.metadata).toEqual({ role: { id: 'r1', name: 'admin' }, reason: 'role_deleted', before, after: { email: 'a@b.c', roles: ['user'] } });
    expect(audited.summary).toEqual({ resource: 'user', resourceId: 'u1', value: { email: 'a@b.c', roles: ['user'] } });
  });

  it('records a password change only as having happened', () => {
    const change = auditEntryOf(recorded('UserPasswordChanged', { userId: 'u1', passwordHash: '[REDACTED]', reason: 'reset' }, 'u1'), null)!;
    expect(change.entry).toMatchObject({ action: 'PASSWORD_RESET', metadata: { passwordChanged: true } });
    expect(JSON.stringify(change)).not.toContain('REDACTED');
    expect(change.summary).toBeUndefined();
  });

  it('a signup acts as the new account; an administrator creation as the administrator; unaudited types give nothing', () => {
    const data = { userId: 'u9', email: 'x@y.z', username: null, firstName: null, lastName: null, enabled: true, emailVerified: false, passwordHash: null, roles: [] };
    expect(auditEntryOf(recorded('UserCreated', { ...data, origin: 'signup' }, 'anonymous'), null)!.entry).toMatchObject({ action: 'SIGNUP', userId: 'u9' });
    expect(auditEntryOf(recorded('UserCreated', data, 'admin-1'), null)!.entry).toMatchObject({ action: 'USER_CREATED', userId: 'admin-1' });
    expect(auditEntryOf(recorded('SessionUsed', { sessionId: 's1', usedAt: 'x' }), null)).toBeNull();
  });
});

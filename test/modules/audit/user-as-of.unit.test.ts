import { describe, expect, it } from 'vitest';
import { userAsOf } from '../../../src/modules/audit/user-history.ts';
import type { RecordedEvent } from '../../../src/platform/eventstore/port.ts';

let position = 0n;
const at = (occurredAt: string, type: string, data: Record<string, unknown>): RecordedEvent => ({
  id: `e${++position}`,
  type,
  data: { userId: 'u1', ...data },
  streamId: 'user-acme.u1',
  revision: position,
  position,
  metadata: { tenantId: 'acme', actor: 'admin', occurredAt },
});

const created = at('2026-01-01T10:00:00.000Z', 'UserCreated', {
  email: 'jane@acme.test',
  username: null,
  firstName: 'Jane',
  lastName: null,
  enabled: true,
  emailVerified: false,
  passwordHash: '$argon2id$x',
  roles: [{ id: 'r2', name: 'user' }],
});
const history = [
  created,
  at('2026-01-02T10:00:00.000Z', 'UserProfileUpdated', { lastName: 'Doe' }),
  at('2026-01-03T10:00:00.000Z', 'UserRoleAssigned', { role: { id: 'r1', name: 'admin' } }),
  at('2026-01-04T10:00:00.000Z', 'UserDisabled', {}),
  at('2026-01-05T10:00:00.000Z', 'UserDeleted', { email: 'jane@acme.test', username: null }),
];
const logins = [
  at('2026-01-02T12:00:00.000Z', 'LoginSucceeded', { sessionId: 's1', method: 'password' }),
  at('2026-01-02T13:00:00.000Z', 'LoginFailed', { reason: 'bad_password' }),
  at('2026-01-02T13:00:00.000Z', 'AccountLocked', { lockedAt: '2026-01-02T13:00:00.000Z', lockedUntil: '2026-01-02T13:05:00.000Z', lockoutNumber: 1, failures: 5 }),
];
const factors = [
  at('2026-01-02T14:00:00.000Z', 'TotpSetupStarted', { sealedSecret: 'v1.sealed' }),
  at('2026-01-02T14:01:00.000Z', 'TotpEnabled', { step: 1, recoveryCodeHashes: [] }),
  at('2026-01-03T14:00:00.000Z', 'TotpDisabled', { proof: { method: 'totp', step: 2 } }),
];

describe('userAsOf: the user stream folded up to an instant', () => {
  it('is null before the creation and after the deletion', () => {
    expect(userAsOf(history, logins, factors, new Date('2026-01-01T09:59:59.999Z'))).toBeNull();
    expect(userAsOf(history, logins, factors, new Date('2026-01-05T10:00:00.000Z'))).toBeNull();
  });

  it('at the creation instant (inclusive) is the user as created, in the GET /api/users/{id} shape', () => {
    const { userId, passwordHash: _hash, roles: _roles, ...profile } = created.data as Record<string, unknown>;
    expect(userAsOf(history, logins, factors, new Date('2026-01-01T10:00:00.000Z'))).toEqual({
      id: userId,
      ...profile,
      createdAt: '2026-01-01T10:00:00.000Z',
      roles: ['user'],
      phoneNumber: null,
      phoneNumberVerified: false,
      lastLoginAt: null,
      lockedUntil: null,
      twoFactor: { totpEnabled: false, smsEnabled: false, webauthnEnabled: false },
    });
  });

  it('applies exactly the changes recorded before the instant, with last login and a lock then in force', () => {
    expect(userAsOf(history, logins, factors, new Date('2026-01-02T13:01:00.000Z'))).toMatchObject({
      lastName: 'Doe',
      roles: ['user'],
      enabled: true,
      lastLoginAt: '2026-01-02T12:00:00.000Z',
      lockedUntil: '2026-01-02T13:05:00.000Z',
    });
    expect(userAsOf(history, logins, factors, new Date('2026-01-03T10:00:00.000Z'))).toMatchObject({ roles: ['admin', 'user'], enabled: true, lockedUntil: null });
    expect(userAsOf(history, logins, factors, new Date('2026-01-04T23:00:00.000Z'))).toMatchObject({ enabled: false });
  });

  it('shows TOTP on between its enabling and its disabling, not while only set up', () => {
    const totpAt = (instant: string) => userAsOf(history, logins, factors, new Date(instant))!.twoFactor.totpEnabled;
    expect([totpAt('2026-01-02T14:00:30.000Z'), totpAt('2026-01-02T14:01:00.000Z'), totpAt('2026-01-03T13:59:59.999Z'), totpAt('2026-01-03T14:00:00.000Z')]).toEqual([false, true, true, false]);
  });
});

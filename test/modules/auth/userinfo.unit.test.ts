import { describe, expect, it } from 'vitest';
import { userinfoClaims } from '../../../src/modules/auth/userinfo.ts';
import type { Role } from '../../../src/modules/roles/index.ts';
import type { TokenSubject } from '../../../src/modules/users/index.ts';

const role = (id: string, name: string): Role => ({ id, name, description: '', color: '#000', permissions: [], createdAt: '2026-01-01T00:00:00.000Z' });
const ada = (changes: Partial<TokenSubject> = {}): TokenSubject =>
  ({ status: 'active', userId: 'u1', email: 'ada@p.test', username: null, firstName: 'Ada', lastName: null, enabled: true, emailVerified: true, roles: [{ id: 'r2' }], ...changes }) as unknown as TokenSubject;

/** The two caches userinfo reads, as their entries stand: a new object is what a reload after a change gives. */
function caches(user: TokenSubject | null, roles: Role[], loading = false) {
  const state = { user, roles };
  const answer = <T>(value: T) => (loading ? Promise.resolve(value) : value);
  return {
    state,
    claims: userinfoClaims({ subjects: { current: () => answer(state.user) }, roles: { current: () => answer(state.roles) } }),
  };
}

describe('userinfo claims from the cached user and roles', () => {
  it("answers the user's claims with the current names of the roles they hold, ordered as the roles list", () => {
    const { claims } = caches(ada({ roles: [{ id: 'r2' }, { id: 'r1' }] } as Partial<TokenSubject>), [role('r1', 'admin'), role('r2', 'user'), role('r3', 'other')]);
    expect(claims('p', 'u1')).toEqual({
      sub: 'u1',
      email: 'ada@p.test',
      email_verified: true,
      given_name: 'Ada',
      family_name: null,
      preferred_username: 'ada@p.test',
      tenant: 'p',
      roles: ['admin', 'user'],
    });
  });

  it('answers the same frozen claims while neither the user nor the roles list changed, and new ones after either changed', () => {
    const { state, claims } = caches(ada(), [role('r2', 'user')]);
    const first = claims('p', 'u1');
    expect(claims('p', 'u1')).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen((first as { roles: string[] }).roles)).toBe(true);

    state.roles = [role('r2', 'member')];
    const renamed = claims('p', 'u1');
    expect(renamed).toMatchObject({ given_name: 'Ada', roles: ['member'] });

    state.user = ada({ firstName: 'Augusta' });
    expect(claims('p', 'u1')).toMatchObject({ given_name: 'Augusta', roles: ['member'] });
    expect(claims('p', 'u1')).not.toBe(renamed);
  });

  it('answers null for a user that no longer exists', () => {
    expect(caches(null, [role('r2', 'user')]).claims('p', 'u1')).toBeNull();
  });

  it('waits for the caches while they load', async () => {
    const { claims } = caches(ada(), [role('r2', 'user')], true);
    const answer = claims('p', 'u1');
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toMatchObject({ sub: 'u1', roles: ['user'] });
    expect(await caches(null, [], true).claims('p', 'u1')).toBeNull();
  });
});

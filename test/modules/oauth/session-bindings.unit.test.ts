import { describe, expect, it } from 'vitest';
import type { Grant } from '../../../src/modules/auth/index.ts';
import { clientAwareRefreshGrant, type CodeGrantDeps } from '../../../src/modules/oauth/authorization-code-grant.ts';
import type { ClientGrant } from '../../../src/modules/oauth/code-events.ts';
import { SessionBindings } from '../../../src/modules/oauth/session-bindings.ts';

const SESSION = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const TOKEN = `acme.${SESSION}.${'a'.repeat(43)}`;
const GRANT: ClientGrant = { sessionId: SESSION, userId: 'u1', clientId: 'acme.c1', scope: ['openid'], authTime: '2030-01-01T00:00:00.000Z', acr: 'aal1', amr: ['pwd'], nonce: null };
const context = { tenantId: 'acme', actor: 'test' };

/** The wrapper over a base refresh grant that succeeds or refuses, counting grant-stream reads. */
function wrapper(bound: ClientGrant | null, baseSucceeds: boolean) {
  const reads = { count: 0 };
  const deps = {
    codes: { grantOf: async () => (reads.count++, bound) },
    // Any client lookup fails: the bound path ends at client authentication.
    applications: { byClientId: async () => null },
  } as unknown as CodeGrantDeps;
  const base: Grant = {
    tenantNamedBy: () => 'acme',
    handle: async () => {
      if (!baseSucceeds) throw new Error('refused by the session');
      return { response: { access_token: 'a', token_type: 'Bearer', expires_in: 1, refresh_token: 'r' } };
    },
  };
  return { grant: clientAwareRefreshGrant(deps, base, new SessionBindings()), reads };
}

describe('remembered session bindings', () => {
  it('remembers an unbound session only after its refresh succeeded', async () => {
    const refused = wrapper(null, false);
    await expect(refused.grant.handle({ refresh_token: TOKEN }, 'acme', context)).rejects.toThrow('refused by the session');
    await expect(refused.grant.handle({ refresh_token: TOKEN }, 'acme', context)).rejects.toThrow('refused by the session');
    expect(refused.reads.count).toBe(2);

    const rotated = wrapper(null, true);
    await rotated.grant.handle({ refresh_token: TOKEN }, 'acme', context);
    await rotated.grant.handle({ refresh_token: TOKEN }, 'acme', context);
    expect(rotated.reads.count).toBe(1);
  });

  it("remembers a client's binding as read, and still authenticates the client every time", async () => {
    const { grant, reads } = wrapper(GRANT, true);
    for (let i = 0; i < 2; i++) {
      await expect(grant.handle({ refresh_token: TOKEN, client_id: 'acme.c1', client_auth_method: 'none' }, 'acme', context)).rejects.toMatchObject({ code: 'invalid_client' });
    }
    expect(reads.count).toBe(1);
  });

  it('keeps the bindings apart by tenant and drops the least recently used past its bound', () => {
    const bindings = new SessionBindings(2);
    bindings.rememberBound('acme', 's1', GRANT);
    bindings.rememberUnbound('acme', 's2');
    expect(bindings.get('other', 's1')).toBeUndefined();
    bindings.rememberBound('acme', 's1', GRANT);
    bindings.rememberUnbound('acme', 's3');
    expect(bindings.get('acme', 's2')).toBeUndefined();
    expect(bindings.get('acme', 's1')).toEqual(GRANT);
    expect(bindings.get('acme', 's3')).toBeNull();
  });
});

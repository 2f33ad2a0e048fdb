import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

/** A token's `scope` claim limits the permissions admin routes accept from it (decisions.md, OAuth 2.0). */
describe('admin checks honour the token scope', () => {
  let t: TestService;
  const mint = async (claims: { sub: string; roles: string[]; scope?: string; client_id?: string }) =>
    (await t.service.tokens.issue({ tid: PLATFORM, acr: 'aal1', amr: ['pwd'], ...claims }, 900)).token;
  const status = async (url: string, token: string) => (await t.request({ method: 'GET', url, tenant: PLATFORM, token })).status;
  const denial = async (url: string, token: string) => {
    const { status, body } = await t.request({ method: 'GET', url, tenant: PLATFORM, token });
    return [status, body.error?.code];
  };

  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it('a user token without scope keeps every permission of its roles', async () => {
    const token = await mint({ sub: 'u1', roles: ['admin'] });
    expect(await status('/api/users', token)).toBe(200);
    expect(await status('/api/roles', token)).toBe(200);
  });

  it("a user token with scope uses only the scope's permissions its roles hold (admin:all holds each)", async () => {
    const token = await mint({ sub: 'u1', roles: ['admin'], scope: 'openid manage:users' });
    expect(await status('/api/users', token)).toBe(200);
    // The roles would allow admin:all, the scope does not.
    expect(await denial('/api/roles', token)).toEqual([403, 'PERMISSION_DENIED']);
    expect(await denial('/api/admin/sessions', token)).toEqual([403, 'PERMISSION_DENIED']);
  });

  it('a scope cannot add what the roles lack', async () => {
    const token = await mint({ sub: 'u2', roles: ['user'], scope: 'manage:users admin:all' });
    expect(await denial('/api/users', token)).toEqual([403, 'PERMISSION_DENIED']);
    expect(await denial('/api/roles', token)).toEqual([403, 'PERMISSION_DENIED']);
  });

  it('an OIDC-only scope reaches no admin route', async () => {
    const token = await mint({ sub: 'u1', roles: ['admin'], scope: 'openid profile email' });
    expect(await denial('/api/users', token)).toEqual([403, 'PERMISSION_DENIED']);
  });

  it("a client token (sub = client_id) holds exactly its scope's permission names, whatever roles it claims", async () => {
    const client = await mint({ sub: 'app-1', client_id: 'app-1', roles: ['admin'], scope: 'manage:users scim' });
    expect(await status('/api/users', client)).toBe(200);
    expect(await denial('/api/roles', client)).toEqual([403, 'PERMISSION_DENIED']);
    const unscoped = await mint({ sub: 'app-1', client_id: 'app-1', roles: [] });
    expect(await denial('/api/users', unscoped)).toEqual([403, 'PERMISSION_DENIED']);
    const wide = await mint({ sub: 'app-1', client_id: 'app-1', roles: [], scope: 'admin:all' });
    expect(await status('/api/roles', wide)).toBe(200);
  });

  it('a user token issued through a client (client_id is not the subject) is a user token', async () => {
    const token = await mint({ sub: 'u2', client_id: 'app-1', roles: ['user'], scope: 'manage:users' });
    expect(await denial('/api/users', token)).toEqual([403, 'PERMISSION_DENIED']);
  });
});

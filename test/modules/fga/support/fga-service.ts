import { expect } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../../../support/service.ts';

export interface FgaTestService extends TestService {
  /** A request as the admin (every permission) of `tenant`, or with the given roles. */
  call(method: string, url: string, body?: unknown, options?: { tenant?: string; roles?: string[] }): ReturnType<TestService['request']>;
  /** Creates and activates a model in the tenant; answers its id. */
  activeModel(dsl: string, tenant?: string): Promise<string>;
}

/** The real service with tenants `acme` and `beta` created through the platform admin. */
export async function startFgaService(options: Parameters<typeof startTestService>[0] = {}): Promise<FgaTestService> {
  const t = await startTestService({ ...options, env: { RATE_LIMIT_ENABLED: 'false', ...options.env } });
  if (!options.db) {
    const platformAdmin = await t.token({ sub: 'platform-admin', tenant: PLATFORM, roles: ['admin'] });
    for (const name of ['acme', 'beta']) {
      const created = await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: platformAdmin, body: { name } });
      expect(created.status).toBe(201);
    }
  }
  const call: FgaTestService['call'] = async (method, url, body, { tenant = 'acme', roles = ['admin'] } = {}) =>
    t.request({ method, url, body, tenant, token: await t.token({ sub: `${tenant}-caller`, tenant, roles }) });
  return {
    ...t,
    call,
    async activeModel(dsl, tenant = 'acme') {
      const created = await call('POST', '/api/fga/models', { name: 'model', dsl }, { tenant });
      expect(created.status).toBe(201);
      expect((await call('POST', `/api/fga/models/${created.body.data.id}/activate`, undefined, { tenant })).status).toBe(200);
      return created.body.data.id;
    },
  };
}

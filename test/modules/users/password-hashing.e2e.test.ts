import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const ADMIN = { email: 'root@platform.test', password: 'Sup3rSecret!' };

describe('argon2id parameters from the environment', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({
      env: { IAM_BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, IAM_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password, ARGON2_MEMORY_KIB: '8192', ARGON2_ITERATIONS: '3', ARGON2_PARALLELISM: '2' },
    });
  });
  afterAll(() => t.close());

  it('hashes with the configured cost, and the hash verifies at login', async () => {
    const { rows } = await t.db.pool.query<{ data: { passwordHash: string } }>(`SELECT data FROM events WHERE type = 'UserCreated'`);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.data.passwordHash).toMatch(/^\$argon2id\$v=19\$m=8192,t=3,p=2\$/);
    const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: ADMIN });
    expect(login.status).toBe(200);
  });
});

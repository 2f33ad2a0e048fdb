import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePassword } from '../../../src/modules/tenants/bootstrap.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const capturingLogger = (lines: string[]) => pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line).msg) });
const announcements = (lines: string[]) => lines.filter((line) => line.startsWith('Created the administrator'));
const CREDENTIALS = /e-mail (\S+), password (\S+) /;

describe('bootstrap without a configured administrator (the quick start)', () => {
  let t: TestService;
  const lines: string[] = [];

  beforeAll(async () => {
    t = await startTestService({ logger: capturingLogger(lines) });
  });
  afterAll(() => t.close());

  it('creates admin@<tenant>.local with a generated password, announced once; that password signs in as admin', async () => {
    expect(announcements(lines)).toHaveLength(1);
    const [, email, password] = CREDENTIALS.exec(announcements(lines)[0]!)!;
    expect(email).toBe(`admin@${PLATFORM}.local`);
    const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email, password } });
    expect(login.status).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/roles', tenant: PLATFORM, token: login.body.data.accessToken })).status).toBe(200);
    const { rows } = await t.db.pool.query('select count(*)::int as n from events where data::text like $1', [`%${password}%`]);
    expect(rows[0].n).toBe(0);
  });

  it('a restart on the same database announces nothing and creates no other administrator', async () => {
    const later: string[] = [];
    const again = await startTestService({ db: t.db, logger: capturingLogger(later) });
    await again.close();
    expect(announcements(later)).toEqual([]);
    const { rows } = await t.db.pool.query("select count(*)::int as n from events where type = 'UserCreated'");
    expect(rows[0].n).toBe(1);
  });
});

describe('bootstrap with IAM_BOOTSTRAP_ADMIN_EMAIL and _PASSWORD', () => {
  it('creates that administrator and generates none', async () => {
    const lines: string[] = [];
    const t = await startTestService({
      logger: capturingLogger(lines),
      env: { IAM_BOOTSTRAP_ADMIN_EMAIL: 'root@platform.test', IAM_BOOTSTRAP_ADMIN_PASSWORD: 'Sup3rSecret!' },
    });
    try {
      expect(announcements(lines)).toEqual([]);
      const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: 'root@platform.test', password: 'Sup3rSecret!' } });
      expect(login.status).toBe(200);
      const { rows } = await t.db.pool.query("select count(*)::int as n from events where type = 'UserCreated'");
      expect(rows[0].n).toBe(1);
    } finally {
      await t.close();
    }
  });
});

describe('generatePassword', () => {
  it('is long, has every character class and differs each time', () => {
    const passwords = Array.from({ length: 50 }, generatePassword);
    for (const password of passwords) expect(password).toMatch(/^(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9])(?=.*[^A-Za-z0-9]).{28}$/);
    expect(new Set(passwords).size).toBe(50);
  });
});

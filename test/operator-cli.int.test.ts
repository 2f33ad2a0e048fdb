import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNING_KEYS_STREAM } from '../src/modules/keys/events.ts';
import { PostgresEventStore } from '../src/platform/eventstore/postgres.ts';
import { createTestDatabase, type TestDatabase } from './support/database.ts';

const run = promisify(execFile);

/** The operator CLI (src/cli.ts) as an operator runs it: a process of its own on the service's database. */
describe('operator CLI', () => {
  let db: TestDatabase;
  const env = () => ({ ...process.env, DATABASE_URL: db.url, IAM_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'), LOG_LEVEL: 'warn' });
  const cli = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env: env() });

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('keys:rotate adds a signing key on a database no service ever started on', async () => {
    const first = await cli('keys:rotate');
    const second = await cli('keys:rotate');
    const kid = (output: string) => /new signing key (\S+)/.exec(output)?.[1];
    expect(kid(first.stdout)).toBeTruthy();
    expect(kid(second.stdout)).not.toBe(kid(first.stdout));
    const store = new PostgresEventStore(db.pool, { pollIntervalMs: 1000 });
    const types = (await store.readStream(SIGNING_KEYS_STREAM)).map((event) => event.type);
    // The first run found no key: the ring's start created one, then the rotation added another.
    expect(types.length).toBe(3);
    await store.close();
  });

  it('answers usage and exit code 2 for an unknown command or projection', async () => {
    await expect(cli('nonsense')).rejects.toMatchObject({ code: 2 });
    await expect(cli('projections:rebuild', 'no-such-projection')).rejects.toMatchObject({ code: 2 });
  });
});

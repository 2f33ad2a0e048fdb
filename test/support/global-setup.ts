import path from 'node:path';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
  }
}

/**
 * One real PostgreSQL for the whole run: DATABASE_URL when given, otherwise an embedded cluster in
 * .tmp/test-postgres. Each test file then creates a database of its own (test/support/database.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.DATABASE_URL) {
    project.provide('adminDatabaseUrl', process.env.DATABASE_URL);
    return async () => undefined;
  }
  // Set TEST_POSTGRES_PORT to run two suites side by side: each port gets its own cluster.
  const port = Number(process.env.TEST_POSTGRES_PORT ?? 54339);
  const server = await startEmbeddedPostgres({
    dataDir: path.resolve(`.tmp/test-${port}`),
    port,
    database: 'postgres',
    logger: pino({ level: 'warn' }),
  });
  project.provide('adminDatabaseUrl', server.url);
  return () => server.stop();
}

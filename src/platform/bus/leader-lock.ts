import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Queryable } from '../db/pool.ts';

/**
 * The first key of the relay's advisory locks. Two-key advisory locks live in another key space
 * than the one-bigint locks the event store takes per stream, so they can never collide.
 */
const LOCK_CLASS = 0x72656c61; // 'rela'
const CONNECTION_CHECK_MS = 1000;

/**
 * A session-level PostgreSQL advisory lock on a dedicated connection: whoever holds it leads. The
 * lock lives exactly as long as the session, so a leader that dies (process killed, connection
 * lost) releases it, and a standby polling for it takes over.
 */
export class LeaderLock {
  /** Resolves once the session that holds the lock is gone. */
  readonly lost: Promise<void>;

  private constructor(private readonly session: pg.Client) {
    this.lost = new Promise((resolve) => {
      session.once('end', resolve);
      session.once('error', () => resolve());
    });
  }

  /**
   * Connects, then tries the lock every `pollMs` until it is granted (resolves the lock) or `signal`
   * aborts (resolves null). Throws when the session fails; the caller retries with a new one.
   */
  static async acquire(connection: pg.ClientConfig, name: string, pollMs: number, signal: AbortSignal): Promise<LeaderLock | null> {
    const session = new pg.Client({ ...connection, application_name: `iam-leader:${name}`, keepAlive: true });
    // A lost connection is reported through `lost`; unheard, the error event would crash the process.
    session.on('error', () => undefined);
    try {
      await session.connect();
      // PostgreSQL checks for a lost client only between statements by default: a leader killed
      // while its session waits (on a row lock, say) would keep the lock until that wait ended.
      await session.query(`set client_connection_check_interval = ${CONNECTION_CHECK_MS}`);
      while (!signal.aborted) {
        const { rows } = await session.query<{ granted: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as granted', [
          LOCK_CLASS,
          name,
        ]);
        if (rows[0]?.granted) return new LeaderLock(session);
        await sleep(pollMs, undefined, { signal }).catch(() => undefined);
      }
    } catch (error) {
      await session.end().catch(() => undefined);
      throw error;
    }
    await session.end();
    return null;
  }

  /** The lock's session: a statement on it succeeds only while the lock is still held. */
  get db(): Queryable {
    return this.session;
  }

  /** Ends the session, which releases the lock. */
  async release(): Promise<void> {
    await this.session.end().catch(() => undefined);
  }
}

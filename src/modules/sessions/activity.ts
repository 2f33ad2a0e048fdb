import type { BackgroundTasks } from '../../platform/background-tasks.ts';
import type { Clock } from '../../platform/clock.ts';
import { systemContext } from '../../platform/commands/context.ts';
import type { SessionCommands } from './commands.ts';

const TOUCH_INTERVAL_MS = 60_000;
/** Bounds the memory of recent touches; forgetting only means one extra event for a session. */
const MAX_REMEMBERED = 100_000;

/**
 * "Any API request refreshes updatedAt" (spec, Session): recorded as SessionUsed at most once a
 * minute per session and instance, after the answer, so activity costs requests nothing.
 */
export class SessionActivity {
  /**
   * Per tenant, per session: the last touch. Two maps keyed by the token's own strings, not one keyed
   * by a string made from both: every authenticated request comes here, and a new key string is
   * built and hashed each time (the claims' strings keep their hashes).
   */
  private readonly lastTouch = new Map<string, Map<string, number>>();
  private remembered = 0;

  constructor(private readonly deps: { commands: SessionCommands; background: BackgroundTasks; clock: Clock }) {}

  touch(tenant: string, sessionId: string, userId: string): void {
    const now = this.deps.clock.now().getTime();
    let sessions = this.lastTouch.get(tenant);
    const last = sessions?.get(sessionId);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    if (last === undefined && this.remembered >= MAX_REMEMBERED) {
      this.lastTouch.clear();
      this.remembered = 0;
      sessions = undefined;
    }
    if (!sessions) this.lastTouch.set(tenant, (sessions = new Map()));
    if (last === undefined) this.remembered += 1;
    sessions.set(sessionId, now);
    this.deps.background.run('session activity', async () => {
      await this.deps.commands.use(tenant, sessionId, { ...systemContext(tenant), actor: userId });
    });
  }
}

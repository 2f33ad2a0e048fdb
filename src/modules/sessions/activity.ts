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
  private readonly lastTouch = new Map<string, number>();

  constructor(private readonly deps: { commands: SessionCommands; background: BackgroundTasks; clock: Clock }) {}

  touch(tenant: string, sessionId: string, userId: string): void {
    const key = `${tenant}/${sessionId}`;
    const now = this.deps.clock.now().getTime();
    const last = this.lastTouch.get(key);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    if (this.lastTouch.size >= MAX_REMEMBERED) this.lastTouch.clear();
    this.lastTouch.set(key, now);
    this.deps.background.run('session activity', async () => {
      await this.deps.commands.use(tenant, sessionId, { ...systemContext(tenant), actor: userId });
    });
  }
}

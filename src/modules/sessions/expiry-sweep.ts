import type { Logger } from 'pino';
import { systemContext } from '../../platform/commands/context.ts';
import type { SessionCommands } from './commands.ts';
import type { SessionQueries } from './queries.ts';

const BATCH = 500;

/**
 * Turns sessions whose time is up into SessionExpired events. Reads already show them as expired
 * (computed from the clock); the events put the ending in the log for audit and consumers.
 * Instances may sweep at once: expiring an ended session changes nothing.
 */
export class SessionExpirySweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(private readonly deps: { commands: SessionCommands; queries: SessionQueries; logger: Logger; intervalMs: number }) {}

  start(): void {
    this.timer = setInterval(() => void this.sweepOnce().catch((error: unknown) => this.deps.logger.error({ err: error }, 'session expiry sweep failed')), this.deps.intervalMs);
    this.timer.unref();
  }

  /** One batch of due sessions; returns how many it expired. Overlapping calls share one run. */
  sweepOnce(): Promise<number> {
    this.running ??= this.sweep().finally(() => (this.running = null));
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  private async sweep(): Promise<number> {
    let expired = 0;
    for (const { tenant, sessionId } of await this.deps.queries.due(BATCH)) {
      const { events } = await this.deps.commands.expire(tenant, sessionId, systemContext(tenant));
      expired += events.length;
    }
    return expired;
  }
}

import type { Logger } from 'pino';

/**
 * Work a request starts but does not wait for (e-mail after forgot-password, so the answer takes
 * the same time whether or not the account exists). Failures are logged; stop() waits for the rest.
 */
export class BackgroundTasks {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  run(name: string, task: () => Promise<void>): void {
    const running = task()
      .catch((error: unknown) => this.logger.error({ err: error, task: name }, 'background task failed'))
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  }

  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}

import type { Logger } from 'pino';

/** A start that failed for a reason its message says whole (a bad setting): printed without a stack. */
export class StartupError extends Error {}

/** Runs `stop` once on the first SIGTERM or SIGINT, then exits 0. */
export function stopOnSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** Ends a process whose start failed: the error (a bad setting as its message only), cleanup, exit 1. */
export async function exitAfterFailedStart(error: unknown, cleanup: (() => Promise<void>) | null): Promise<never> {
  if (error instanceof StartupError) console.error(error.message);
  else console.error(error);
  await cleanup?.().catch(() => undefined);
  process.exit(1);
}

import { buildService } from './app.ts';
import { loadConfig } from './config.ts';
import { systemClock } from './platform/clock.ts';
import { createLogger } from './platform/logging.ts';
import { loadMasterKey } from './platform/crypto/master-key.ts';
import { openStorage } from './infrastructure.ts';
import { exitAfterFailedStart, stopOnSignal } from './platform/process-lifecycle.ts';

let closeStorage: (() => Promise<void>) | null = null;

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const storage = await openStorage(config, logger);
  closeStorage = () => storage.close();
  const { pool, store } = storage;
  const masterKey = await loadMasterKey({ configured: config.IAM_MASTER_KEY, dataDir: config.DATA_DIR, logger });
  const service = await buildService({ config, logger, pool, store, clock: systemClock, masterKey });
  await service.start();
  await service.app.listen({ port: config.PORT, host: config.HOST });

  stopOnSignal(logger, async () => {
    await service.stop();
    await storage.close();
  });
}

main().catch((error: unknown) => exitAfterFailedStart(error, closeStorage));

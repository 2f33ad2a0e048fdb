import { KeyRing } from './modules/keys/index.ts';
import { loadConfig } from './config.ts';
import { cataloguedStore } from './event-catalogue.ts';
import { systemClock } from './platform/clock.ts';
import { createLogger } from './platform/logging.ts';
import { loadMasterKey } from './platform/crypto/master-key.ts';
import { DataKeys } from './platform/crypto/data-keys.ts';
import { SecretBox } from './platform/crypto/secret-box.ts';
import { openStorage } from './infrastructure.ts';
import { rebuildProjections } from './platform/projections/rebuild.ts';
import { allProjections } from './projections.ts';

const USAGE = `usage:
  npm run projections:rebuild -- <name>|--all   empty a read model and replay the whole log into it
  npm run keys:rotate                           add a signing key (old keys stay published until their tokens expire)
projections: ${allProjections.map((p) => p.name).join(', ')}`;

/** Operator commands, run against the same database and event store as the service. */
async function main(argv: string[]): Promise<number> {
  const [command, argument] = argv;
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const storage = await openStorage(config, logger);
  const pool = storage.pool;
  const masterKey = await loadMasterKey({ configured: config.IAM_MASTER_KEY, dataDir: config.DATA_DIR, logger });
  const secretBox = new SecretBox(masterKey);
  const store = cataloguedStore(storage.store, new DataKeys(pool, secretBox));
  try {
    switch (command) {
      case 'projections:rebuild': {
        const selected = argument === '--all' ? allProjections : allProjections.filter((p) => p.name === argument);
        if (selected.length === 0) {
          console.error(USAGE);
          return 2;
        }
        await rebuildProjections(selected, store, pool, logger, (name, ms) => console.log(`rebuilt ${name} in ${ms} ms`));
        return 0;
      }
      case 'keys:rotate': {
        // Only the key ring: rotating a key needs no HTTP server, projections or relay.
        const keyRing = new KeyRing({ store, clock: systemClock, secretBox }, config.IAM_JWT_ALG, config.IAM_BOOTSTRAP_TENANT ?? 'platform');
        await keyRing.start();
        console.log(`new signing key ${await keyRing.rotate('cli')}`);
        return 0;
      }
      default:
        console.error(USAGE);
        return 2;
    }
  } finally {
    await storage.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

import pino from 'pino';
import { buildService } from './app.ts';
import { loadConfig } from './config.ts';
import { systemClock } from './platform/clock.ts';
import { loadMasterKey } from './platform/crypto/master-key.ts';
import { openDatabase } from './platform/db/open.ts';
import { openEventStore } from './platform/eventstore/open.ts';
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
  const logger = pino({ level: config.LOG_LEVEL });
  const database = await openDatabase(config, logger);
  const store = await openEventStore(config, database.pool);
  try {
    switch (command) {
      case 'projections:rebuild': {
        const selected = argument === '--all' ? allProjections : allProjections.filter((p) => p.name === argument);
        if (selected.length === 0) {
          console.error(USAGE);
          return 2;
        }
        await rebuildProjections(selected, store, database.pool, logger, (name, ms) => console.log(`rebuilt ${name} in ${ms} ms`));
        return 0;
      }
      case 'keys:rotate': {
        const masterKey = await loadMasterKey({ configured: config.IAM_MASTER_KEY, dataDir: config.DATA_DIR, logger });
        const service = await buildService({ config, logger, pool: database.pool, store, clock: systemClock, masterKey });
        await service.keyRing.start();
        console.log(`new signing key ${await service.keyRing.rotate('cli')}`);
        return 0;
      }
      default:
        console.error(USAGE);
        return 2;
    }
  } finally {
    await store.close();
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

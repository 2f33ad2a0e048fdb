import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';

/**
 * IAM_MASTER_KEY when set; otherwise a key generated once and kept in DATA_DIR/master.key (mode
 * 0600), with a warning: fine for a laptop, not for production, where the key belongs in a vault.
 */
export async function loadMasterKey(options: { configured: string | undefined; dataDir: string; logger: Logger }): Promise<string> {
  if (options.configured) return options.configured;
  const file = path.resolve(options.dataDir, 'master.key');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const key = randomBytes(32).toString('base64url');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' }).catch(async () => undefined);
    options.logger.warn({ file }, 'IAM_MASTER_KEY is unset: generated a master key in DATA_DIR; set IAM_MASTER_KEY in production');
    return (await readFile(file, 'utf8')).trim();
  }
}

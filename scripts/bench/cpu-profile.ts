import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

/**
 * A CPU profile of this process's main thread (V8's sampling profiler, 200 µs between samples)
 * from now until `stop`, which writes it as DIR/<label>.cpuprofile (Chrome DevTools, speedscope)
 * and returns the file's path. Only the window measured, not the setup around it.
 */
export async function cpuProfiler(intervalUs = 200) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return {
    async stop(dir: string, label: string): Promise<string> {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `${label.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '')}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
}

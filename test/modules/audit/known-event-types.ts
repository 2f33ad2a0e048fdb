import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../../', import.meta.url).pathname;

function filesUnder(dir: string, name: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name), name) : entry.name === name ? [join(dir, entry.name)] : [],
  );
}

/**
 * Every event type the modules declare: the `DomainEvent<'Type'` literals of each events.ts, and
 * the reservation events. When src/event-catalogue.ts lands, this becomes its list of types.
 */
export function knownEventTypes(): string[] {
  const sources = [...filesUnder(join(ROOT, 'src/modules'), 'events.ts'), join(ROOT, 'src/platform/commands/reservations.ts')];
  const types = sources.flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(/DomainEvent<\s*'([A-Za-z]+)'/g), ...text.matchAll(/'(Reservation(?:Claimed|Released))'/g)].map((m) => m[1]!);
  });
  return [...new Set(types)].sort();
}

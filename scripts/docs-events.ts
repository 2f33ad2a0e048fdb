/**
 * Writes docs/events.md from the event catalogue (`npm run docs:events`). A unit test fails when
 * the committed file differs from what this renders, so no event goes undocumented.
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { eventCatalogue } from '../src/event-catalogue.ts';
import type { EventCatalogue } from '../src/platform/events/catalogue.ts';
import type { EventDefinition } from '../src/platform/events/define-event.ts';
import { schemaFields, type JsonSchema } from '../src/platform/events/field-paths.ts';

export const EVENTS_DOC = new URL('../docs/events.md', import.meta.url);

/** A short type name of a JSON Schema node: `string`, `string | null`, `"a" | "b"`, `array`, `object`. */
function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(' \\| ');
  if (Array.isArray(schema.type)) return schema.type.join(' \\| ');
  if (typeof schema.type === 'string') return schema.type;
  const alternatives = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (alternatives) return [...new Set(alternatives.map(typeOf))].join(' \\| ');
  if (schema.$ref) return 'recursive (see above)';
  return 'any';
}

function section(definition: EventDefinition): string {
  const mark = (list: readonly string[], path: string) => (list.includes(path) ? 'yes' : '');
  const rows = schemaFields(definition.jsonSchema).map(
    ({ path, schema, required }) =>
      `| \`${path}\` | ${typeOf(schema)} | ${required ? 'yes' : ''} | ${mark(definition.personal, path)} | ${mark(definition.sensitive, path)} |`,
  );
  return [
    `## ${definition.type} (version ${definition.version})`,
    '',
    ...(definition.description ? [definition.description, ''] : []),
    ...(definition.version > 1 ? [`Events written in an earlier version are read (upcast) as version ${definition.version}.`, ''] : []),
    '| field | type | required | personal | sensitive |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

export function renderEventsMarkdown(catalogue: EventCatalogue): string {
  const definitions = [...catalogue.definitions].sort((a, b) => a.type.localeCompare(b.type));
  return [
    '# Events',
    '',
    '<!-- Generated from the event catalogue (src/event-catalogue.ts) by `npm run docs:events`; do not edit. -->',
    '',
    'Every event type the service writes, in its current schema version. **Sensitive** fields never leave',
    'the service (the relay strips them; the AsyncAPI document at `/api/asyncapi.json` omits them).',
    '**Personal** fields are data about a person. Paths: `a.b` nested, `a[].b` in every array element,',
    '`a.*.b` in every value of a record.',
    '',
    `| event | version | personal | sensitive |`,
    '|---|---|---|---|',
    ...definitions.map((d) => `| [${d.type}](#${d.type.toLowerCase()}-version-${d.version}) | ${d.version} | ${d.personal.join(', ')} | ${d.sensitive.join(', ')} |`),
    '',
    ...definitions.map(section),
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(EVENTS_DOC, renderEventsMarkdown(eventCatalogue));
  console.log(`wrote ${EVENTS_DOC.pathname}`);
}

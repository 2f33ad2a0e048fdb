import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENTS_DOC, renderEventsMarkdown } from '../../scripts/docs-events.ts';
import { eventCatalogue } from '../../src/event-catalogue.ts';

describe('docs/events.md', () => {
  it('is what `npm run docs:events` generates from the catalogue (run it after changing an event)', () => {
    expect(readFileSync(EVENTS_DOC, 'utf8')).toBe(renderEventsMarkdown(eventCatalogue));
  });

  it('documents every event type with its version', () => {
    const markdown = renderEventsMarkdown(eventCatalogue);
    for (const { type, version } of eventCatalogue.definitions) expect(markdown).toContain(`## ${type} (version ${version})`);
  });
});

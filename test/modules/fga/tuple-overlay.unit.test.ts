import { describe, expect, it } from 'vitest';
import { MemoryTupleStore, parseTuple } from '../../../src/modules/fga/index.ts';
import { foldLogTail, IndexMovedOn, OverlayTupleReader, type TupleOverlay } from '../../../src/modules/fga/serving/tuple-overlay.ts';
import type { RecordedEvent } from '../../../src/platform/eventstore/port.ts';

const AT = new Date('2026-03-14T12:00:00.000Z');
const BEFORE = '2026-03-14T11:59:59.999Z';
const AFTER = '2026-03-14T12:00:00.001Z';

let position = 100n;
const event = (type: 'FgaTupleWritten' | 'FgaTupleDeleted', text: string, occurredAt: string): RecordedEvent => ({
  id: `e${position}`,
  streamId: `fgatuple-acme.${text}`,
  revision: 0n,
  position: (position += 1n),
  type,
  data: { tuple: parseTuple(text), ...(type === 'FgaTupleWritten' ? { modelId: 'm' } : {}) },
  metadata: { tenantId: 'acme', actor: 'a', occurredAt },
});
const overlayOf = (entries: [string, boolean][]): TupleOverlay => new Map(entries.map(([text, stood]) => [text, { tuple: parseTuple(text), stood }]));
const standing = (overlay: TupleOverlay) => Object.fromEntries([...overlay].map(([key, { stood }]) => [key, stood]));

describe('folding the log past the history checkpoint into the overlay', () => {
  it('undoes a change after the instant of a tuple the history saw unchanged: written then means absent, deleted means standing', () => {
    const overlay = overlayOf([]);
    foldLogTail(overlay, [event('FgaTupleWritten', 'doc:1#viewer@user:anne', AFTER), event('FgaTupleDeleted', 'doc:2#viewer@user:bob', AFTER)], AT);
    expect(standing(overlay)).toEqual({ 'doc:1#viewer@user:anne': false, 'doc:2#viewer@user:bob': true });
  });

  it('counts an event at or before the instant that committed after the checkpoint, the last one of its tuple deciding', () => {
    const overlay = overlayOf([['doc:1#viewer@user:anne', false]]);
    foldLogTail(
      overlay,
      [
        event('FgaTupleWritten', 'doc:1#viewer@user:anne', AT.toISOString()),
        event('FgaTupleWritten', 'doc:2#viewer@user:bob', BEFORE),
        event('FgaTupleDeleted', 'doc:2#viewer@user:bob', AT.toISOString()),
        event('FgaTupleWritten', 'doc:2#viewer@user:bob', AFTER),
      ],
      AT,
    );
    expect(standing(overlay)).toEqual({ 'doc:1#viewer@user:anne': true, 'doc:2#viewer@user:bob': false });
  });

  it("keeps the history's answer for a tuple it saw change since the instant", () => {
    const overlay = overlayOf([['doc:1#viewer@user:anne', true], ['doc:2#viewer@user:bob', false]]);
    foldLogTail(overlay, [event('FgaTupleWritten', 'doc:1#viewer@user:anne', AFTER), event('FgaTupleDeleted', 'doc:2#viewer@user:bob', AFTER)], AT);
    expect(standing(overlay)).toEqual({ 'doc:1#viewer@user:anne': true, 'doc:2#viewer@user:bob': false });
  });
});

describe('the live index read through an overlay', () => {
  const live = ['doc:1#viewer@user:anne', 'doc:1#viewer@user:*', 'doc:1#viewer@group:eng#member', 'doc:2#viewer@user:anne'].map(parseTuple);
  const then: [string, boolean][] = [
    ['doc:1#viewer@user:anne', false], // written since
    ['doc:1#viewer@user:carl', true], // deleted since
    ['doc:1#viewer@user:*', true], // deleted and written again since
    ['doc:3#viewer@user:anne', true],
  ];
  const reader = (position: { current: bigint }) => new OverlayTupleReader(MemoryTupleStore.of(live), overlayOf(then), () => position.current, 10n);
  const has = (r: OverlayTupleReader, text: string) => r.hasTuple(parseTuple(text));

  it('answers every lookup as the tuples stood, wildcard and usersets included', () => {
    const r = reader({ current: 10n });
    expect(new Set(r.readSubjectIds({ objectType: 'doc', objectId: '1', relation: 'viewer', subjectType: 'user' }))).toEqual(new Set(['carl', '*']));
    expect(new Set(r.readSubjectIds({ objectType: 'doc', objectId: '1', relation: 'viewer', subjectType: 'group', subjectRelation: 'member' }))).toEqual(new Set(['eng']));
    expect(new Set(r.readObjectIds({ objectType: 'doc', relation: 'viewer', subjectType: 'user', subjectId: 'anne' }))).toEqual(new Set(['2', '3']));
    expect(new Set(r.readObjectIds({ objectType: 'doc', relation: 'viewer', subjectType: 'user', subjectId: '*' }))).toEqual(new Set(['1']));
    expect([has(r, 'doc:1#viewer@user:anne'), has(r, 'doc:1#viewer@user:carl'), has(r, 'doc:2#viewer@user:anne'), has(r, 'doc:2#viewer@user:bob')]).toEqual([false, true, true, false]);
  });

  it('refuses to answer once the live index holds events the overlay was not built with', () => {
    const position = { current: 10n };
    const r = reader(position);
    expect(has(r, 'doc:2#viewer@user:anne')).toBe(true);
    position.current = 11n;
    expect(() => has(r, 'doc:2#viewer@user:anne')).toThrow(IndexMovedOn);
    expect(() => r.readSubjectIds({ objectType: 'doc', objectId: '1', relation: 'viewer', subjectType: 'user' })).toThrow(IndexMovedOn);
  });
});

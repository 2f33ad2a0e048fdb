import { describe, it } from 'vitest';
import { tenantTuplesDecider } from '../../../src/modules/fga/tuples/decider.ts';
import type { FgaTupleEvent } from '../../../src/modules/fga/tuples/events.ts';
import { parseTuple } from '../../../src/modules/fga/tuple.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(tenantTuplesDecider);
const viewer = parseTuple('document:d1#viewer@group:eng#member');
const editor = parseTuple('document:d1#editor@user:ann');
const owner = parseTuple('folder:f1#owner@user:bob');
const changed = (writes: typeof viewer[], deletes: typeof viewer[] = [], modelId = 'm1'): FgaTupleEvent => ({
  type: 'FgaTuplesChanged',
  data: writes.length > 0 ? { modelId, writes, deletes } : { writes, deletes },
});
const write = (writes: typeof viewer[], deletes: typeof viewer[] = []) => ({ type: 'ChangeTuples' as const, writes, deletes, modelId: 'm1' });
// Recorded before FgaTuplesChanged, in one stream per tuple: the tenant's state folds them too.
const legacyWritten: FgaTupleEvent = { type: 'FgaTupleWritten', data: { tuple: owner, modelId: 'm0' } };
const legacyDeleted: FgaTupleEvent = { type: 'FgaTupleDeleted', data: { tuple: owner } };

describe("a tenant's relation tuples (one event per request)", () => {
  it('writes every tuple of a request in one event, and a tuple only once', () => {
    spec.given([]).when(write([viewer, editor])).then([changed([viewer, editor])]);
    spec.given([changed([viewer])]).when(write([editor, viewer])).thenThrows('TUPLE_EXISTS');
    spec.given([changed([viewer]), changed([], [viewer])]).when(write([viewer])).then([changed([viewer])]);
    spec.given([legacyWritten]).when(write([owner])).thenThrows('TUPLE_EXISTS');
    spec.given([legacyWritten, legacyDeleted]).when(write([owner])).then([changed([owner])]);
  });

  it('deletes only tuples that exist, and records nothing when none does', () => {
    spec.given([changed([viewer])]).when(write([], [viewer, editor])).then([changed([], [viewer])]);
    spec.given([]).when(write([], [viewer])).then([]);
    spec.given([changed([viewer]), changed([], [viewer])]).when(write([], [viewer])).then([]);
    spec.given([legacyWritten]).when(write([], [owner])).then([changed([], [owner])]);
  });

  it('writes and deletes in one request', () => {
    spec.given([changed([viewer])]).when(write([editor], [viewer, owner])).then([changed([editor], [viewer])]);
  });

  it('sees the latest change of each tuple however many events it folds (layers are merged past a depth)', () => {
    // The editor tuple written then deleted early on, then twenty events writing and deleting the viewer tuple in turn.
    const toggles = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? changed([viewer]) : changed([], [viewer])));
    const history = [changed([editor]), changed([owner]), changed([], [editor]), ...toggles];
    spec.given(history).when(write([viewer, editor], [owner])).then([changed([viewer, editor], [owner])]);
    spec.given([...history, changed([viewer])]).when(write([viewer])).thenThrows('TUPLE_EXISTS');
    spec.given([...history, changed([], [owner])]).when(write([], [owner, editor])).then([]);
  });
});

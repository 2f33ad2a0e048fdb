import { describe, it } from 'vitest';
import { tupleDecider } from '../../../src/modules/fga/tuples/decider.ts';
import type { FgaTupleEvent } from '../../../src/modules/fga/tuples/events.ts';
import { parseTuple } from '../../../src/modules/fga/tuple.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(tupleDecider);
const tuple = parseTuple('document:d1#viewer@group:eng#member');
const written: FgaTupleEvent = { type: 'FgaTupleWritten', data: { tuple, modelId: 'm1' } };
const deleted: FgaTupleEvent = { type: 'FgaTupleDeleted', data: { tuple } };

describe('relation tuple decider (one stream per tuple)', () => {
  it('writes a tuple once', () => {
    spec.given([]).when({ type: 'WriteTuple', tuple, modelId: 'm1' }).then([written]);
    spec.given([written]).when({ type: 'WriteTuple', tuple, modelId: 'm2' }).thenThrows('TUPLE_EXISTS');
    spec.given([written, deleted]).when({ type: 'WriteTuple', tuple, modelId: 'm1' }).then([written]);
  });

  it('deletes idempotently', () => {
    spec.given([written]).when({ type: 'DeleteTuple', tuple }).then([deleted]);
    spec.given([]).when({ type: 'DeleteTuple', tuple }).then([]);
    spec.given([written, deleted]).when({ type: 'DeleteTuple', tuple }).then([]);
  });
});

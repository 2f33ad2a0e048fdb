import type { Decider } from '../../../platform/commands/decider.ts';
import { fgaError } from '../app-errors.ts';
import type { RelationTuple } from '../tuple.ts';
import { tupleToString } from '../tuple.ts';
import type { FgaTupleEvent } from './events.ts';

export type TupleState = { status: 'absent' | 'written' };

export type TupleCommand =
  | { type: 'WriteTuple'; tuple: RelationTuple; modelId: string }
  /** Deleting an absent tuple succeeds and records nothing (the spec's idempotent delete). */
  | { type: 'DeleteTuple'; tuple: RelationTuple };

export const tupleDecider: Decider<TupleState, TupleCommand, FgaTupleEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(_state, event) {
    switch (event.type) {
      case 'FgaTupleWritten':
        return { status: 'written' };
      case 'FgaTupleDeleted':
        return { status: 'absent' };
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'WriteTuple':
        if (state.status === 'written') throw fgaError('TUPLE_EXISTS', `Tuple '${tupleToString(command.tuple)}' already exists`);
        return [{ type: 'FgaTupleWritten', data: { tuple: command.tuple, modelId: command.modelId } }];
      case 'DeleteTuple':
        return state.status === 'written' ? [{ type: 'FgaTupleDeleted', data: { tuple: command.tuple } }] : [];
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};

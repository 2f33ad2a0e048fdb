import type { Decider } from '../../platform/commands/decider.ts';
import { notFound } from '../../platform/errors.ts';
import type { LogStreamEvent, LogStreamSettings, LogStreamStatus } from './events.ts';

export type LogStreamState =
  | { status: 'absent' }
  | ({ status: 'present'; logStreamId: string; streamStatus: LogStreamStatus } & LogStreamSettings)
  | { status: 'deleted'; logStreamId: string };

export type LogStreamCommand =
  | { type: 'CreateLogStream'; logStreamId: string; settings: LogStreamSettings }
  | { type: 'UpdateLogStream'; changes: Partial<Omit<LogStreamSettings, 'type'>> }
  | { type: 'SetLogStreamStatus'; status: 'active' | 'paused' }
  /** Deliveries kept failing: the stream goes to error unless it is paused or in error already. */
  | { type: 'DisableFailingLogStream'; consecutiveFailures: number }
  | { type: 'DeleteLogStream' };

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const logStreamDecider: Decider<LogStreamState, LogStreamCommand, LogStreamEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'LogStreamCreated': {
        const { logStreamId, ...settings } = event.data;
        return { status: 'present', logStreamId, streamStatus: 'active', ...settings };
      }
      case 'LogStreamUpdated': {
        if (state.status !== 'present') return state;
        const { logStreamId: _id, ...changes } = event.data;
        return { ...state, ...Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) };
      }
      case 'LogStreamStatusChanged':
        return state.status === 'present' ? { ...state, streamStatus: event.data.status } : state;
      case 'LogStreamDeleted':
        return { status: 'deleted', logStreamId: event.data.logStreamId };
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    if (command.type === 'CreateLogStream') {
      if (state.status !== 'absent') return [];
      return [{ type: 'LogStreamCreated', data: { logStreamId: command.logStreamId, ...command.settings } }];
    }
    if (state.status !== 'present') throw notFound('Log stream');
    const { logStreamId } = state;
    switch (command.type) {
      case 'UpdateLogStream': {
        // The configuration comes only when its clear text changed (a new seal differs every time).
        const { config, sealedConfig, ...compared } = command.changes;
        const changed = Object.fromEntries(
          Object.entries(compared).filter(([key, value]) => value !== undefined && !sameValue(value, state[key as keyof LogStreamSettings])),
        );
        if (config !== undefined && sealedConfig !== undefined) Object.assign(changed, { config, sealedConfig });
        if (Object.keys(changed).length === 0) return [];
        return [{ type: 'LogStreamUpdated', data: { logStreamId, ...changed } }];
      }
      case 'SetLogStreamStatus':
        return state.streamStatus === command.status ? [] : [{ type: 'LogStreamStatusChanged', data: { logStreamId, status: command.status } }];
      case 'DisableFailingLogStream':
        // Deliveries in flight keep failing after the first disabling, and a paused stream stays paused.
        if (state.streamStatus !== 'active') return [];
        return [{ type: 'LogStreamStatusChanged', data: { logStreamId, status: 'error', consecutiveFailures: command.consecutiveFailures } }];
      case 'DeleteLogStream':
        return [{ type: 'LogStreamDeleted', data: { logStreamId, name: state.name } }];
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};

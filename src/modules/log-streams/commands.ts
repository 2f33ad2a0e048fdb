import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, lastPosition, toNewEvents } from '../../platform/commands/handle-command.ts';
import { claimReservation, isReservationConflict, releaseReservation, type ReservationDeps } from '../../platform/commands/reservations.ts';
import { logStreamDecider, type LogStreamCommand } from './decider.ts';
import { logStreamError } from './errors.ts';
import { logStreamNameReservation, logStreamStreamId, type LogStreamSettings } from './events.ts';

const nameTaken = () => logStreamError('STREAM_NAME_TAKEN', 'A log stream with this name already exists');
const KIND = 'log-stream-name';

/** Log streams' commands; names are unique per tenant, case-insensitively, through reservation streams. */
export function logStreamCommands(deps: ReservationDeps) {
  const run = (tenant: string, id: string, command: LogStreamCommand, context: CommandContext) =>
    handleCommand(deps, logStreamDecider, logStreamStreamId(tenant, id), command, context);
  const renamingOrTaken = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (isReservationConflict(error, KIND)) throw nameTaken();
      throw error;
    }
  };

  return {
    create: (tenant: string, logStreamId: string, settings: LogStreamSettings, context: CommandContext) =>
      renamingOrTaken(async () => {
        const events = logStreamDecider.decide({ type: 'CreateLogStream', logStreamId, settings }, logStreamDecider.initialState());
        const appends = [
          { streamId: logStreamStreamId(tenant, logStreamId), expectedRevision: 'no_stream' as const, events: toNewEvents(events, context, deps.clock) },
          ...(await claimReservation(deps, logStreamNameReservation(tenant, settings.name, logStreamId), context)),
        ];
        return { position: lastPosition(await deps.store.appendMulti(appends)), occurredAt: appends[0]!.events[0]!.metadata.occurredAt };
      }),

    update: (tenant: string, logStreamId: string, changes: Partial<Omit<LogStreamSettings, 'type'>>, context: CommandContext) =>
      renamingOrTaken(() =>
        handleCommand(deps, logStreamDecider, logStreamStreamId(tenant, logStreamId), { type: 'UpdateLogStream', changes }, context, async (events, before) => {
          const newName = events[0]?.type === 'LogStreamUpdated' ? events[0].data.name : undefined;
          if (newName === undefined || before.status !== 'present' || newName.toLowerCase() === before.name.toLowerCase()) return [];
          return [
            ...(await releaseReservation(deps, logStreamNameReservation(tenant, before.name, logStreamId), context)),
            ...(await claimReservation(deps, logStreamNameReservation(tenant, newName, logStreamId), context)),
          ];
        }),
      ),

    setStatus: (tenant: string, logStreamId: string, status: 'active' | 'paused', context: CommandContext) =>
      run(tenant, logStreamId, { type: 'SetLogStreamStatus', status }, context),

    /** Whether this call put the stream in error (false when it was not active). */
    async disableFailing(tenant: string, logStreamId: string, consecutiveFailures: number, context: CommandContext): Promise<boolean> {
      return (await run(tenant, logStreamId, { type: 'DisableFailingLogStream', consecutiveFailures }, context)).events.length > 0;
    },

    delete: (tenant: string, logStreamId: string, context: CommandContext) =>
      handleCommand(deps, logStreamDecider, logStreamStreamId(tenant, logStreamId), { type: 'DeleteLogStream' }, context, async (events) => {
        const deleted = events.find((e) => e.type === 'LogStreamDeleted');
        return deleted?.type === 'LogStreamDeleted' ? releaseReservation(deps, logStreamNameReservation(tenant, deleted.data.name, logStreamId), context) : [];
      }),
  };
}

export type LogStreamCommands = ReturnType<typeof logStreamCommands>;

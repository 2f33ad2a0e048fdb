import type { Decider } from '../../platform/commands/decider.ts';
import { notFound } from '../../platform/errors.ts';
import { applicationError } from './errors.ts';
import type { ApplicationEvent, ApplicationSettings, ApplicationType } from './events.ts';
import { assertCoherent, isPublicType } from './rules.ts';

export type Application = { applicationId: string; clientId: string; type: ApplicationType; secretHash: string | null } & ApplicationSettings;

export type ApplicationState = { status: 'absent' } | ({ status: 'present' } & Application) | { status: 'deleted'; applicationId: string };

export type ApplicationCommand =
  | { type: 'CreateApplication'; applicationId: string; clientId: string; applicationType: ApplicationType; settings: ApplicationSettings; secretHash: string | null }
  | { type: 'UpdateApplication'; changes: Partial<ApplicationSettings> }
  | { type: 'RotateApplicationSecret'; secretHash: string }
  | { type: 'DeleteApplication' };

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const applicationDecider: Decider<ApplicationState, ApplicationCommand, ApplicationEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'ApplicationCreated':
        return { status: 'present', ...event.data };
      case 'ApplicationUpdated': {
        if (state.status !== 'present') return state;
        const { applicationId: _id, ...changes } = event.data;
        return { ...state, ...changes };
      }
      case 'ApplicationSecretRotated':
        return state.status === 'present' ? { ...state, secretHash: event.data.secretHash } : state;
      case 'ApplicationDeleted':
        return { status: 'deleted', applicationId: event.data.applicationId };
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    if (command.type === 'CreateApplication') {
      if (state.status !== 'absent') throw applicationError('APPLICATION_EXISTS', 'Application already exists');
      const { applicationId, clientId, applicationType: type, settings, secretHash } = command;
      assertCoherent(type, settings);
      // Public clients get no secret, confidential ones always one.
      if ((secretHash === null) !== isPublicType(type)) throw new Error(`a ${type} application ${secretHash === null ? 'needs' : 'has no'} secret`);
      return [{ type: 'ApplicationCreated', data: { applicationId, clientId, type, ...settings, secretHash } }];
    }
    if (state.status !== 'present') throw notFound('Application');
    switch (command.type) {
      case 'UpdateApplication': {
        const changed = Object.fromEntries(
          Object.entries(command.changes).filter(([key, value]) => value !== undefined && !sameValue(value, state[key as keyof ApplicationSettings])),
        ) as Partial<ApplicationSettings>;
        if (Object.keys(changed).length === 0) return [];
        assertCoherent(state.type, { ...state, ...changed });
        return [{ type: 'ApplicationUpdated', data: { applicationId: state.applicationId, ...changed } }];
      }
      case 'RotateApplicationSecret':
        if (isPublicType(state.type)) throw applicationError('APPLICATION_IS_PUBLIC', `A ${state.type} application is a public client: it has no secret`);
        return [{ type: 'ApplicationSecretRotated', data: { applicationId: state.applicationId, secretHash: command.secretHash } }];
      case 'DeleteApplication':
        return [{ type: 'ApplicationDeleted', data: { applicationId: state.applicationId } }];
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};

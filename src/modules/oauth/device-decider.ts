import type { Decider } from '../../platform/commands/decider.ts';
import { notFound } from '../../platform/errors.ts';
import { invalidGrant } from '../sessions/index.ts';
import type { DeviceAuthorizationApproved, DeviceAuthorizationEvent, DeviceAuthorizationStarted } from './device-events.ts';
import { oauthError } from './errors.ts';

type Started = DeviceAuthorizationStarted['data'];
type Approval = Omit<DeviceAuthorizationApproved['data'], 'userCode'>;

export type DeviceState =
  | { status: 'absent' }
  | { status: 'pending' | 'denied'; request: Started }
  | { status: 'approved' | 'redeemed'; request: Started; approval: Approval };

export type DeviceCommand =
  | { type: 'StartDeviceAuthorization'; request: Started }
  | { type: 'DecideDevice'; approve: boolean; approval: Approval; tenantOfUser: string; tenantOfClient: string; now: string }
  | { type: 'PollDevice'; presentedHash: string; clientId: string; now: string };

export const deviceDecider: Decider<DeviceState, DeviceCommand, DeviceAuthorizationEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'DeviceAuthorizationStarted':
        return { status: 'pending', request: event.data };
      case 'DeviceAuthorizationApproved': {
        if (state.status === 'absent') return state;
        const { userCode: _code, ...approval } = event.data;
        return { status: 'approved', request: state.request, approval };
      }
      case 'DeviceAuthorizationDenied':
        return state.status === 'absent' ? state : { status: 'denied', request: state.request };
      case 'DeviceAuthorizationRedeemed':
        return state.status === 'approved' ? { ...state, status: 'redeemed' } : state;
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'StartDeviceAuthorization':
        // A user code still (or once) in use: the caller draws another.
        if (state.status !== 'absent') throw new Error('user code collision');
        return [{ type: 'DeviceAuthorizationStarted', data: command.request }];
      case 'DecideDevice': {
        // Unknown, expired, already decided, or another tenant's: nothing to approve here.
        if (state.status !== 'pending' || command.now >= state.request.expiresAt || command.tenantOfUser !== command.tenantOfClient) {
          throw notFound('User code');
        }
        const { userCode } = state.request;
        if (!command.approve) return [{ type: 'DeviceAuthorizationDenied', data: { userCode, userId: command.approval.userId } }];
        return [{ type: 'DeviceAuthorizationApproved', data: { userCode, ...command.approval } }];
      }
      case 'PollDevice': {
        if (state.status === 'absent' || state.request.deviceCodeHash !== command.presentedHash || state.request.clientId !== command.clientId) {
          throw invalidGrant('Unknown device_code');
        }
        if (state.status === 'redeemed') throw invalidGrant('The device_code was already used');
        if (state.status === 'denied') throw oauthError('access_denied', 'The user denied the authorization');
        // Approved or not, a device code is good for its lifetime only (RFC 8628 3.5: the session has concluded).
        if (command.now >= state.request.expiresAt) throw oauthError('expired_token', 'The device_code has expired');
        if (state.status === 'approved') return [{ type: 'DeviceAuthorizationRedeemed', data: { userCode: state.request.userCode, sessionId: state.approval.sessionId } }];
        throw oauthError('authorization_pending', 'The user has not yet approved');
      }
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};

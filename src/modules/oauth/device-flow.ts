import { randomBytes, randomInt } from 'node:crypto';
import { tenantNamedByClientId, type Application } from '../applications/index.ts';
import type { SessionCommands } from '../sessions/index.ts';
import type { SettingsProvider } from '../settings/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, toNewEvents, type CommandDeps } from '../../platform/commands/handle-command.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { hashOpaqueSecret } from '../../platform/crypto/opaque-tokens.ts';
import { oauthGrantStreamId, type ClientSessionBound } from './code-events.ts';
import { deviceDecider, type DeviceState } from './device-decider.ts';
import { deviceStreamId } from './device-events.ts';
import { fold } from '../../platform/commands/decider.ts';
import { notFound, platformError } from '../../platform/errors.ts';
import { loadUser } from '../users/index.ts';
import type { DeviceAuthorizationEvent } from './device-events.ts';

/** decisions.md: 8 letters of this alphabet (no vowels: no words), shown XXXX-XXXX; 600 s; poll every 5 s. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const DEVICE_CODE_LIFETIME_S = 600;
export const DEVICE_POLL_INTERVAL_S = 5;

/** The user code as stored (8 letters), from what a person typed (any case, dashes and spaces). */
export const normalizedUserCode = (typed: string): string | null => {
  const letters = typed.toUpperCase().replace(/[\s-]/g, '');
  return /^[BCDFGHJKLMNPQRSTVWXZ]{8}$/.test(letters) ? letters : null;
};
export const displayedUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

const newUserCode = () => Array.from({ length: 8 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]).join('');

/** device_code is `<USERCODE>.<secret>`: the code finds the stream, the secret's hash proves possession. */
export function parseDeviceCode(deviceCode: string): { userCode: string; secret: string } | null {
  const match = /^([BCDFGHJKLMNPQRSTVWXZ]{8})\.([A-Za-z0-9_-]{43})$/.exec(deviceCode);
  return match ? { userCode: match[1]!, secret: match[2]! } : null;
}

export interface DeviceFlowDeps extends CommandDeps {
  sessions: SessionCommands;
  settings: SettingsProvider;
  secretBox: SecretBox;
}

/** The device authorization grant's commands (RFC 8628). */
export function deviceFlow(deps: DeviceFlowDeps) {
  const load = async (userCode: string): Promise<DeviceState> =>
    fold(deviceDecider, (await deps.store.readStream(deviceStreamId(userCode))) as unknown as DeviceAuthorizationEvent[]);

  /**
   * An approval through the API is proven by an access token, not a password: its session records
   * the password current now, so a password changed before it starts still ends it.
   */
  const startSession = async (tenant: string, user: { userId: string; acr: string; amr: string[] }, context: CommandContext) => {
    const current = await loadUser(deps.store, tenant, user.userId);
    const passwordVersion = current.status === 'active' ? current.passwordVersion : 0;
    return deps.sessions.start(tenant, user.userId, await deps.settings.forTenant(tenant), context, { acr: user.acr, amr: user.amr, passwordVersion });
  };
  return {
    async start(application: Application, scope: string[], context: CommandContext) {
      const secret = randomBytes(32).toString('base64url');
      const expiresAt = new Date(deps.clock.now().getTime() + DEVICE_CODE_LIFETIME_S * 1000).toISOString();
      // A drawn code that is taken (20^8 codes, so rarely) is drawn again.
      for (let attempt = 0; ; attempt++) {
        const userCode = newUserCode();
        try {
          const request = { userCode, clientId: application.clientId, scope, deviceCodeHash: hashOpaqueSecret(secret), expiresAt, interval: DEVICE_POLL_INTERVAL_S };
          await handleCommand(deps, deviceDecider, deviceStreamId(userCode), { type: 'StartDeviceAuthorization', request }, context);
          return { userCode, deviceCode: `${userCode}.${secret}` };
        } catch (error) {
          if (attempt >= 5 || !(error instanceof Error) || error.message !== 'user code collision') throw error;
        }
      }
    },

    /** The pending request of a user code (for the verification page), or null. */
    async pending(userCode: string) {
      const state = await load(userCode);
      return state.status === 'pending' && state.request.expiresAt > deps.clock.now().toISOString() ? state.request : null;
    },

    /**
     * The user's decision. Approval starts the device's session (its first refresh token sealed in
     * the approval) and binds it to the client and scope, all in one append; `session` is one
     * already started for this purpose (the verification page's sign-in).
     */
    async decide(
      tenant: string,
      userCode: string,
      approve: boolean,
      /**
       * `scope`: what the approving credential may grant (an access token's scope claim), null or absent when unrestricted.
       * `tokenSession`: the session of the approving access token (null: a token of no session); absent for the page's sign-in.
       */
      user: { userId: string; acr: string; amr: string[]; scope?: readonly string[] | null; tokenSession?: string | null },
      context: CommandContext,
      session?: { sessionId: string; refreshToken: string },
    ): Promise<void> {
      const state = await load(userCode);
      const clientId = state.status === 'absent' ? '' : state.request.clientId;
      // Nothing pending for this user's tenant: refused before a session is started for it (the decider checks again).
      if (state.status !== 'pending' || tenantNamedByClientId(clientId) !== tenant) throw notFound('User code');
      // A token restricted to a scope approves no device asking more (RFC 9700 2.3): else a narrow token would become a wider session.
      const beyond = approve && user.scope ? state.request.scope.filter((name) => !user.scope!.includes(name)) : [];
      if (beyond.length) throw platformError('PERMISSION_DENIED', `The approving token's scope does not hold: ${beyond.join(' ')}`);
      // Approving starts a session with a refresh token: from a live session only, never from the token of a revoked
      // one (valid until it expires) nor from a token of no session.
      const signedInAt = approve && user.tokenSession ? await deps.sessions.liveSince(tenant, user.tokenSession) : null;
      if (approve && user.tokenSession !== undefined && !signedInAt) {
        throw platformError('PERMISSION_DENIED', 'The session of this token has ended: sign in again to approve a device');
      }
      const started = approve && !session ? await startSession(tenant, user, context) : null;
      const chosen = session ?? (started ? { sessionId: started.sessionId, refreshToken: started.refreshToken } : { sessionId: '', refreshToken: '' });
      const now = deps.clock.now().toISOString();
      // auth_time (OIDC Core 2): when the user signed in, the approving token's session's start; the page signs in now.
      const approval = { userId: user.userId, sessionId: chosen.sessionId, authTime: signedInAt ?? now, acr: user.acr, amr: user.amr, sealedRefreshToken: approve ? deps.secretBox.seal(chosen.refreshToken) : '' };
      const command = { type: 'DecideDevice' as const, approve, approval, tenantOfUser: tenant, tenantOfClient: tenantNamedByClientId(clientId) ?? '', now };
      await handleCommand(deps, deviceDecider, deviceStreamId(userCode), command, context, async (events) => {
        if (events[0]?.type !== 'DeviceAuthorizationApproved') return [];
        const bound: ClientSessionBound = {
          type: 'ClientSessionBound',
          data: { sessionId: chosen.sessionId, userId: user.userId, clientId, scope: state.request.scope, authTime: approval.authTime, acr: user.acr, amr: user.amr },
        };
        return [...(started?.appends ?? []), { streamId: oauthGrantStreamId(tenant, chosen.sessionId), expectedRevision: 'no_stream', events: toNewEvents([bound], context, deps.clock) }];
      });
    },

    /** A poll: the approval once (then the device code is spent), or the RFC 8628 error of its state. */
    async redeem(userCode: string, secret: string, clientId: string, context: CommandContext) {
      const result = await handleCommand(
        deps,
        deviceDecider,
        deviceStreamId(userCode),
        { type: 'PollDevice', presentedHash: hashOpaqueSecret(secret), clientId, now: deps.clock.now().toISOString() },
        context,
      );
      if (result.state.status !== 'redeemed') throw new Error('unreachable: a poll that did not throw redeemed the code');
      return { request: result.state.request, approval: result.state.approval };
    },
  };
}

export type DeviceFlow = ReturnType<typeof deviceFlow>;

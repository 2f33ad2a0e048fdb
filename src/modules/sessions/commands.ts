import type { SecuritySettings } from '../settings/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { decideAppend, handleCommand, toNewEvents, type CommandDeps } from '../../platform/commands/handle-command.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { newId } from '../../platform/ids.ts';
import { FoldedStates } from '../../platform/commands/folded-states.ts';
import { fold } from '../../platform/commands/decider.ts';
import { invalidGrant, sessionDecider, type SessionState } from './decider.ts';
import { sessionStreamId, type SessionEvent, type SessionRevokeReason, type SessionStarted } from './events.ts';
import type { SessionQueries } from './queries.ts';
import { hashOpaqueSecret } from '../../platform/crypto/opaque-tokens.ts';
import { newRefreshToken, parseRefreshToken } from './refresh-tokens.ts';

/**
 * A rotation is recorded without the request's client address and user agent (docs/decisions.md,
 * "Sessions and tokens"): nothing reads them (not audited, no webhook; the read model shows the
 * session's values at its start), and, with no signed-in actor, they would stay in clear outside
 * the session user's erasure. The reuse revocation keeps them for the audit log.
 */
const withoutDeviceData = (context: CommandContext): CommandContext => ({ ...context, clientIp: null, userAgent: null });

export function sessionCommands(deps: CommandDeps & { queries: SessionQueries }) {
  const revokeAppend = async (tenant: string, sessionId: string, reason: SessionRevokeReason, context: CommandContext): Promise<StreamAppend[]> => {
    const { append } = await decideAppend(deps, sessionDecider, sessionStreamId(tenant, sessionId), { type: 'RevokeSession', reason }, context);
    return append ? [append] : [];
  };

  return {
    /**
     * The appends that start a session for a successful authentication, revoking the user's oldest
     * sessions first when maxConcurrentSessions is reached.
     */
    async start(tenant: string, userId: string, settings: SecuritySettings, context: CommandContext, auth: { acr: string; amr: string[]; passwordVersion: number }, sessionId = newId()) {
      const refresh = newRefreshToken(tenant, sessionId);
      const now = deps.clock.now();
      const at = (seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();
      const started: SessionStarted = {
        type: 'SessionStarted',
        data: {
          sessionId,
          userId,
          startedAt: now.toISOString(),
          refreshTokenHash: refresh.hash,
          refreshExpiresAt: at(settings.refreshTokenExpiry),
          ipAddress: context.clientIp ?? null,
          userAgent: context.userAgent ?? null,
          expiresAt: at(settings.sessionMaxLifetime),
          idleTimeoutSeconds: settings.sessionIdleTimeout,
          refreshTokenLifetimeSeconds: settings.refreshTokenExpiry,
          ...auth,
        },
      };
      const streamId = sessionStreamId(tenant, sessionId);
      const appends: StreamAppend[] = [{ streamId, expectedRevision: 'no_stream', events: toNewEvents([started], context, deps.clock) }];
      // The first refresh then appends without reading the stream (one round trip). Remembered before
      // the caller's append: a state is only trusted by an append expecting its revision, so if this
      // one is never written, that append fails and the refresh reads the (absent) stream.
      FoldedStates.of<SessionState>(deps.store, sessionDecider).remember(streamId, { state: sessionDecider.evolve(sessionDecider.initialState(), started), revision: 0n });
      if (settings.maxConcurrentSessions > 0) {
        const active = await deps.queries.activeOf(tenant, userId);
        const excess = active.slice(0, Math.max(0, active.length - settings.maxConcurrentSessions + 1));
        for (const oldest of excess) appends.push(...(await revokeAppend(tenant, oldest, 'max_sessions', context)));
      }
      return { sessionId, refreshToken: refresh.token, appends, session: started.data };
    },

    /**
     * Rotates the refresh token. A reused (already exchanged) token revokes the whole session:
     * that outcome is returned, not thrown, so the caller can wait for the revocation to be readable.
     */
    async refresh(tenant: string, refreshToken: string, context: CommandContext) {
      // The session is read from `tenant`'s stream: a token naming another tenant finds none there.
      const parsed = parseRefreshToken(refreshToken);
      if (!parsed) throw invalidGrant('Unknown refresh token');
      const next = newRefreshToken(tenant, parsed.id);
      const result = await handleCommand(
        deps,
        sessionDecider,
        sessionStreamId(tenant, parsed.id),
        { type: 'RefreshSession', presentedHash: hashOpaqueSecret(parsed.secret), newHash: next.hash, now: deps.clock.now().toISOString() },
        (events) => (events[0]?.type === 'SessionRefreshed' ? withoutDeviceData(context) : context),
      );
      if (result.events[0]?.type !== 'SessionRefreshed' || result.state.status !== 'active') {
        return { outcome: 'reused' as const, position: result.position };
      }
      return { outcome: 'rotated' as const, session: result.state.session, refreshToken: next.token, position: result.position };
    },

    /** The appends that revoke every active session of a user but `keep` (after a password change). */
    async revokeAllOfUser(tenant: string, userId: string, reason: SessionRevokeReason, context: CommandContext, keep?: string): Promise<StreamAppend[]> {
      const active = (await deps.queries.activeOf(tenant, userId)).filter((sessionId) => sessionId !== keep);
      return (await Promise.all(active.map((sessionId) => revokeAppend(tenant, sessionId, reason, context)))).flat();
    },

    /** Records API activity: the idle limit counts from here. */
    use(tenant: string, sessionId: string, context: CommandContext) {
      return handleCommand(deps, sessionDecider, sessionStreamId(tenant, sessionId), { type: 'UseSession', now: deps.clock.now().toISOString() }, context);
    },

    /** Ends a session whose lifetime or idle limit has passed; a no-op otherwise (the sweep may repeat). */
    expire(tenant: string, sessionId: string, context: CommandContext) {
      return handleCommand(deps, sessionDecider, sessionStreamId(tenant, sessionId), { type: 'ExpireSession', now: deps.clock.now().toISOString() }, context);
    },

    /**
     * When a session started (its user signed in), if it is still live (neither revoked nor expired,
     * nor past its lifetime or idle limit), else null; read from its stream: for what a session's
     * access token may start anew, which a revoked session's token, valid until it expires, must not.
     */
    async liveSince(tenant: string, sessionId: string): Promise<string | null> {
      const state = fold(sessionDecider, (await deps.store.readStream(sessionStreamId(tenant, sessionId))) as unknown as SessionEvent[]);
      if (state.status !== 'active') return null;
      const now = deps.clock.now().getTime();
      return now < state.idleEndsAt && now < Date.parse(state.session.expiresAt) ? state.session.startedAt : null;
    },

    /** Revokes a session; revoking a revoked session succeeds and changes nothing. */
    revoke(tenant: string, sessionId: string, reason: SessionRevokeReason, context: CommandContext) {
      return handleCommand(deps, sessionDecider, sessionStreamId(tenant, sessionId), { type: 'RevokeSession', reason }, context);
    },
  };
}

export type SessionCommands = ReturnType<typeof sessionCommands>;

import { createHash } from 'node:crypto';
import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, type CommandDeps } from '../../platform/commands/handle-command.ts';
import { hashOpaqueSecret, newOpaqueToken, parseOpaqueToken } from '../../platform/crypto/opaque-tokens.ts';
import { TENANT_NAME } from '../../platform/http/tenant-resolution.ts';
import { invalidGrant } from '../sessions/index.ts';
import { codeDecider } from './code-decider.ts';
import { oauthGrantStreamId, type AuthorizationCodeEvent, type ClientGrant, type IssuedCode } from './code-events.ts';

/** Codes live 60 seconds (decisions.md; RFC 6749 4.1.2 recommends at most 10 minutes). */
export const CODE_LIFETIME_MS = 60_000;

/** RFC 7636 4.2: BASE64URL(SHA256(ASCII(code_verifier))). */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier, 'ascii').digest('base64url');

/** Codes are `<tenant>.<sessionId>.<secret>` like refresh tokens: the prefix finds the stream, the secret's hash proves the code. */
export function parseCode(code: string): { tenant: string; sessionId: string; secret: string } | null {
  const dot = code.indexOf('.');
  const tenant = code.slice(0, dot);
  const rest = dot > 0 && TENANT_NAME.test(tenant) ? parseOpaqueToken(code.slice(dot + 1)) : null;
  return rest ? { tenant, sessionId: rest.id, secret: rest.secret } : null;
}

export const tenantNamedByCode = (code: string | undefined): string | null => (code ? (parseCode(code)?.tenant ?? null) : null);

export type CodeGrant = Omit<IssuedCode, 'codeHash' | 'expiresAt'>;

/** The authorization codes' commands (single use, short-lived, replay recorded). */
export function codeCommands(deps: CommandDeps) {
  return {
    async issue(tenant: string, grant: CodeGrant, context: CommandContext): Promise<string> {
      const { token, hash } = newOpaqueToken(grant.sessionId);
      const expiresAt = new Date(deps.clock.now().getTime() + CODE_LIFETIME_MS).toISOString();
      await handleCommand(deps, codeDecider, oauthGrantStreamId(tenant, grant.sessionId), { type: 'IssueCode', code: { ...grant, codeHash: hash, expiresAt } }, context);
      return `${tenant}.${token}`;
    },

    /** The code's grant when this call redeemed it; `replayed` when it had been redeemed before. */
    async redeem(tenant: string, code: string, presented: { clientId: string; redirectUri: string | null; codeVerifier: string | null }, context: CommandContext) {
      const parsed = parseCode(code);
      if (!parsed || parsed.tenant !== tenant) throw invalidGrant('The authorization code is invalid, expired or already used');
      const result = await handleCommand(
        deps,
        codeDecider,
        oauthGrantStreamId(tenant, parsed.sessionId),
        {
          type: 'RedeemCode',
          presentedHash: hashOpaqueSecret(parsed.secret),
          clientId: presented.clientId,
          redirectUri: presented.redirectUri,
          verifierChallenge: presented.codeVerifier === null ? null : s256(presented.codeVerifier),
          now: deps.clock.now().toISOString(),
        },
        context,
      );
      const state = result.state;
      if (state.status === 'absent') throw new Error('unreachable: a redeemed code has state');
      return { outcome: state.status === 'redeemed' ? ('redeemed' as const) : ('replayed' as const), code: state.code };
    },

    /** What the client holds over a session (through a code or a device approval), or null (a password-login session). */
    async grantOf(tenant: string, sessionId: string): Promise<ClientGrant | null> {
      const [first] = (await deps.store.readStream(oauthGrantStreamId(tenant, sessionId))) as unknown as AuthorizationCodeEvent[];
      if (first?.type === 'AuthorizationCodeIssued') {
        // What the session's tokens need, without the code's hash and the sealed refresh token.
        const { sessionId, userId, clientId, scope, authTime, acr, amr, nonce } = first.data;
        return { sessionId, userId, clientId, scope, authTime, acr, amr, nonce };
      }
      if (first?.type === 'ClientSessionBound') return { ...first.data, nonce: null };
      return null;
    },
  };
}

export type CodeCommands = ReturnType<typeof codeCommands>;

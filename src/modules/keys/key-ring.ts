import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { createPublicKey, createSecretKey, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import { systemContext } from '../../platform/commands/context.ts';
import { fold } from '../../platform/commands/decider.ts';
import { handleCommand } from '../../platform/commands/handle-command.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import { newId } from '../../platform/ids.ts';
import { keyRingDecider, publishedKeys, type KeyRingState, type SigningKey } from './decider.ts';
import { SIGNING_KEYS_STREAM, type SigningAlgorithm, type SigningKeyEvent } from './events.ts';

/** The bound of accessTokenExpiry: no token outlives a superseded key by more than this. */
export const MAX_ACCESS_TOKEN_SECONDS = 86_400;
const RELOAD_INTERVAL_MS = 60_000;

type JoseKey = CryptoKey | Uint8Array;

/**
 * The signing keys of the service, event-sourced in one stream and cached here. Other instances'
 * rotations are picked up by a periodic reload and whenever a token names an unknown kid.
 */
export class KeyRing {
  private state: KeyRingState = { keys: [] };
  private imported = new Map<string, { verify: KeyObject; sign: JoseKey }>();
  private loadedAt = 0;

  constructor(
    private readonly deps: { store: EventStore; clock: Clock; secretBox: SecretBox },
    readonly alg: SigningAlgorithm,
    private readonly platformTenant: string,
  ) {}

  async start(): Promise<void> {
    await this.reload();
    if (this.state.keys.some((k) => k.alg === this.alg)) return;
    const command = { type: 'EnsureSigningKey' as const, key: await this.generate() };
    await handleCommand(this.deps, keyRingDecider, SIGNING_KEYS_STREAM, command, systemContext(this.platformTenant));
    await this.reload();
  }

  async rotate(actor: string): Promise<string> {
    const key = await this.generate();
    await handleCommand(this.deps, keyRingDecider, SIGNING_KEYS_STREAM, { type: 'RotateSigningKey', key }, { ...systemContext(this.platformTenant), actor });
    await this.reload();
    return key.kid;
  }

  async reload(): Promise<void> {
    const events = await this.deps.store.readStream(SIGNING_KEYS_STREAM);
    this.state = fold(keyRingDecider, events as unknown as SigningKeyEvent[]);
    this.loadedAt = Date.now();
  }

  /** The key new tokens are signed with. */
  async signingKey(): Promise<{ kid: string; key: JoseKey }> {
    if (Date.now() - this.loadedAt > RELOAD_INTERVAL_MS) await this.reload();
    const current = this.state.keys.filter((k) => k.alg === this.alg).at(-1);
    if (!current) throw new Error('No signing key: KeyRing.start() was not called');
    return { kid: current.kid, key: (await this.importKey(current)).sign };
  }

  /**
   * The verification key for a kid, if it is still published (reloading once for an unknown kid):
   * a node:crypto key object, made once per kid, for a synchronous verify.
   */
  async verificationKey(kid: string): Promise<KeyObject | null> {
    let key = this.published().find((k) => k.kid === kid);
    if (!key && Date.now() - this.loadedAt > 1000) {
      await this.reload();
      key = this.published().find((k) => k.kid === kid);
    }
    return key ? (await this.importKey(key)).verify : null;
  }

  /** The public JWKS: RSA public keys only (an HS256 secret is never published). */
  jwks(): { keys: JWK[] } {
    return {
      keys: this.published()
        .filter((k) => k.publicJwk)
        .map((k) => ({ ...(k.publicJwk as JWK), kid: k.kid, alg: k.alg, use: 'sig' })),
    };
  }

  private published(): SigningKey[] {
    return publishedKeys(this.state, this.alg, this.deps.clock.now(), MAX_ACCESS_TOKEN_SECONDS);
  }

  private async importKey(key: SigningKey): Promise<{ verify: KeyObject; sign: JoseKey }> {
    const cached = this.imported.get(key.kid);
    if (cached) return cached;
    const secret = this.deps.secretBox.open(key.sealedPrivateKey);
    const imported =
      key.alg === 'HS256'
        ? { verify: createSecretKey(Buffer.from(secret, 'base64url')), sign: Buffer.from(secret, 'base64url') }
        : {
            verify: createPublicKey({ key: key.publicJwk as JsonWebKey, format: 'jwk' }),
            sign: (await importJWK(JSON.parse(secret) as JWK, 'RS256')) as CryptoKey,
          };
    this.imported.set(key.kid, imported);
    return imported;
  }

  private async generate(): Promise<SigningKey> {
    const kid = newId();
    const createdAt = this.deps.clock.now().toISOString();
    if (this.alg === 'HS256') {
      return { kid, alg: 'HS256', publicJwk: null, sealedPrivateKey: this.deps.secretBox.seal(randomBytes(32).toString('base64url')), createdAt };
    }
    const { publicKey, privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
    const { kty, n, e } = await exportJWK(publicKey);
    return {
      kid,
      alg: 'RS256',
      publicJwk: { kty, n, e },
      sealedPrivateKey: this.deps.secretBox.seal(JSON.stringify(await exportJWK(privateKey))),
      createdAt,
    };
  }
}

import type { Decider } from '../../platform/commands/decider.ts';
import type { SigningKeyAdded, SigningKeyEvent } from './events.ts';

export type SigningKey = SigningKeyAdded['data'];

export interface KeyRingState {
  /** Oldest first; the newest key of the configured algorithm signs. */
  keys: SigningKey[];
}

export type KeyRingCommand =
  | { type: 'EnsureSigningKey'; key: SigningKey }
  | { type: 'RotateSigningKey'; key: SigningKey };

export const keyRingDecider: Decider<KeyRingState, KeyRingCommand, SigningKeyEvent> = {
  initialState: () => ({ keys: [] }),
  evolve: (state, event) => ({ keys: [...state.keys, event.data] }),
  decide(command, state) {
    switch (command.type) {
      case 'EnsureSigningKey':
        // Idempotent start-up: only the first instance to start adds a key of this algorithm.
        return state.keys.some((k) => k.alg === command.key.alg) ? [] : [{ type: 'SigningKeyAdded', data: command.key }];
      case 'RotateSigningKey':
        return [{ type: 'SigningKeyAdded', data: command.key }];
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};

/**
 * Keys still published: the signing key, plus every superseded key until the longest possible
 * access token signed with it has expired.
 */
export function publishedKeys(state: KeyRingState, alg: string, now: Date, maxTokenLifetimeSeconds: number): SigningKey[] {
  const ofAlg = state.keys.filter((k) => k.alg === alg);
  return ofAlg.filter((_key, index) => {
    const successor = ofAlg[index + 1];
    if (!successor) return true;
    return new Date(successor.createdAt).getTime() + maxTokenLifetimeSeconds * 1000 > now.getTime();
  });
}

import { v7 } from 'uuid';

/** Time-ordered identifiers (UUIDv7) for aggregates and events. */
export function newId(): string {
  return v7();
}

import { v7 } from 'uuid';

/** Time-ordered identifiers (UUIDv7) for aggregates and events. */
export function newId(): string {
  return v7();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a caller-supplied id can be a UUID: anything else names nothing (404, never a SQL cast error). */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

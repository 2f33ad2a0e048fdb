/** SQLSTATE codes of a server that is going away or not accepting connections yet. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
/** Socket failures of a connection to a server that is down or restarting. */
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN']);
/** node-postgres reports a dropped connection by message only. */
const DROPPED_CONNECTION = /^Connection terminated|not queryable|Connection ended/;

/**
 * Whether `error` (or an error it wraps) says PostgreSQL cannot be reached right now: refused or
 * dropped connections, SQLSTATE class 08, a shutdown or a server still starting up. Such a
 * failure is transient (the service reconnects), unlike a failing statement.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08') || UNAVAILABLE_SOCKET_CODES.has(code))) return true;
    if (DROPPED_CONNECTION.test(current.message)) return true;
  }
  return false;
}

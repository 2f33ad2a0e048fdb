import pg from 'pg';

/**
 * Records the statements sent on the connections named `applicationName` (a dedicated session
 * outside the pools: a reaction's lock session, the relay's leader session) until `stop`.
 */
export function watchSessionStatements(applicationName: string): { sent: string[]; stop(): void } {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if ((this as unknown as { connectionParameters: { application_name?: string } }).connectionParameters.application_name === applicationName) {
      sent.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string }).text)); // a named statement: its text
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  return {
    sent,
    stop: () => {
      pg.Client.prototype.query = query;
    },
  };
}

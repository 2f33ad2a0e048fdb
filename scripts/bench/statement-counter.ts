import pg from 'pg';

/**
 * Counts the SQL statements every pg client of this process sends, by the statement's first words,
 * so a benchmark can print statements per unit of work (a figure a loaded machine does not skew).
 */
export function countStatements() {
  const counts = new Map<string, number>();
  // The key of each statement text, made once: the counting should cost the measured work little.
  const keys = new Map<string, string>();
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
    let key = keys.get(text);
    if (key === undefined) {
      if (keys.size > 10_000) keys.clear();
      keys.set(text, (key = text.replace(/\s+/g, ' ').trim().slice(0, 70)));
    }
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return {
    reset: () => counts.clear(),
    total: () => [...counts.values()].reduce((sum, n) => sum + n, 0),
    /** The most frequent statements, per `unit` (e.g. per delivery). */
    top: (unit: number, limit = 12) =>
      [...counts.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, limit)
        .map(([text, n]) => `    ${(n / unit).toFixed(3).padStart(8)}  ${text}`),
  };
}

import type { Queryable } from '../../src/platform/db/pool.ts';
import type { Projection } from '../../src/platform/projections/projection.ts';

/** Every row of a table, as comparable text values, keyed by its primary key. */
export type TableSnapshot = Map<string, Record<string, string | null>>;

const asText = (value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
};

async function primaryKey(db: Queryable, table: string): Promise<string[]> {
  const { rows } = await db.query<{ column: string }>(
    `select a.attname as column from pg_index i
       join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
      where i.indrelid = $1::regclass and i.indisprimary
      order by array_position(i.indkey::int2[], a.attnum)`,
    [table],
  );
  if (rows.length === 0) throw new Error(`table ${table} has no primary key`);
  return rows.map((r) => r.column);
}

/** Every table of every projection, rows ordered by primary key. */
export async function snapshotReadModels(db: Queryable, projections: Projection[]): Promise<Map<string, TableSnapshot>> {
  const snapshot = new Map<string, TableSnapshot>();
  for (const table of projections.flatMap((p) => p.tables)) {
    const key = await primaryKey(db, table);
    const { rows } = await db.query<Record<string, unknown>>(`select * from ${table} order by ${key.join(', ')}`);
    const byKey: TableSnapshot = new Map();
    for (const row of rows) {
      const values = Object.fromEntries(Object.entries(row).map(([column, value]) => [column, asText(value)]));
      byKey.set(key.map((column) => values[column]).join(' | '), values);
    }
    snapshot.set(table, byKey);
  }
  return snapshot;
}

/** One line per row missing, extra or changed (naming the columns that differ); empty when equal. */
export function diffReadModels(before: Map<string, TableSnapshot>, after: Map<string, TableSnapshot>): string[] {
  const lines: string[] = [];
  for (const [table, rowsBefore] of before) {
    const rowsAfter = after.get(table) ?? new Map();
    for (const [key, row] of rowsBefore) {
      const rebuilt = rowsAfter.get(key);
      if (!rebuilt) {
        lines.push(`${table} [${key}]: missing after the rebuild`);
        continue;
      }
      for (const column of Object.keys(row)) {
        if (row[column] !== rebuilt[column]) lines.push(`${table} [${key}].${column}: ${row[column]} -> ${rebuilt[column]}`);
      }
    }
    for (const key of rowsAfter.keys()) if (!rowsBefore.has(key)) lines.push(`${table} [${key}]: only after the rebuild`);
  }
  return lines;
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integerArray, textArray, timestampArray } from '../../../src/platform/outbound/array-parameters.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

describe('array parameters of the queue statements', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  const decoded = async <T>(literal: string, type: string): Promise<T[]> => (await db.pool.query<{ a: T[] }>(`select $1::${type}[] as a`, [literal])).rows[0]!.a;

  it('PostgreSQL reads back every text as given: quotes, backslashes, separators, braces, blanks, NULL, the word NULL, unicode', async () => {
    const texts = ['plain', '{"json": "body", "path": "C:\\\\dir"}', 'a,b', '{}', ' padded ', '', null, 'NULL', 'naïve ✓', '\\', '"', 'line\nbreak'];
    expect(await decoded<string | null>(textArray(texts), 'text')).toEqual(texts);
    expect(await decoded<string>(textArray([]), 'text')).toEqual([]);
  });

  it('reads back uuids, integers with NULL, and instants to the millisecond', async () => {
    const ids = ['0193a2b4-1111-7abc-8def-0123456789ab', '6ba7b811-9dad-11d1-80b4-00c04fd430c8'];
    expect(await decoded<string>(textArray(ids), 'uuid')).toEqual(ids);
    expect(await decoded<number | null>(integerArray([0, -3, 204, null, 2_000_000_000]), 'int')).toEqual([0, -3, 204, null, 2_000_000_000]);
    const instants = [new Date('2026-11-26T14:40:01.123Z'), null, new Date(0)];
    expect(await decoded<Date | null>(timestampArray(instants), 'timestamptz')).toEqual(instants);
  });
});

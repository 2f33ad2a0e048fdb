import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolClient } from '../../../src/platform/db/pool.ts';
import { auditQueries, type AuditLogFilter } from '../../../src/modules/audit/queries.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

/**
 * PERMISSION_CHECK rows are left out of audit_log_by_action (migration 0027); listings that name
 * them walk the time or user index instead, and the default listing, which leaves them out, walks
 * the time index past the checks written before migration 0029 (0037). With sequential scans off,
 * the listing must take those index paths and still answer what plain SQL over the table answers.
 */
describe('audit log listings over the indexes that hold permission checks', () => {
  let db: TestDatabase;
  let client: PoolClient;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(
      `insert into audit_log (tenant_id, id, action, user_id, status, created_at)
       select case when i % 7 = 0 then 'other' else 'acme' end, gen_random_uuid(),
              case when i % 10 < 7 then 'PERMISSION_CHECK' else (array['LOGIN', 'USER_UPDATED', 'LOGOUT'])[1 + i % 3] end,
              'user-' || (i % 13), 'success', timestamptz '2026-01-01' + (i / 3) * interval '1 second'
         from generate_series(1, 3000) as i`,
    );
    await db.pool.query('analyze audit_log');
    client = await db.pool.connect();
    await client.query('set enable_seqscan = off');
  });
  afterAll(async () => {
    client.release();
    await db.drop();
  });

  const filter = ({ excludeActions = [], ...fields }: Partial<Omit<AuditLogFilter, 'excludeActions'>> & { excludeActions?: readonly string[] }): AuditLogFilter => ({
    offset: 0,
    limit: 500,
    ...fields,
    excludeActions: [...excludeActions],
  });
  const expected = async (condition: string, params: unknown[], limit: number, offset = 0) => {
    const { rows } = await db.pool.query<{ id: string }>(
      `select id from audit_log where tenant_id = 'acme' and ${condition} order by created_at desc, id desc`,
      params,
    );
    return { ids: rows.slice(offset, offset + limit).map((row) => row.id), total: rows.length };
  };

  it('leaves permission checks out of the action index only', async () => {
    const { rows } = await db.pool.query<{ indexname: string; indexdef: string }>("select indexname, indexdef from pg_indexes where tablename = 'audit_log'");
    const byAction = rows.find((row) => row.indexname === 'audit_log_by_action');
    expect(byAction?.indexdef).toMatch(/WHERE \(action <> 'PERMISSION_CHECK'::text\)/);
    expect(rows.find((row) => row.indexname === 'audit_log_by_time')?.indexdef).not.toMatch(/WHERE/);
    expect(rows.find((row) => row.indexname === 'audit_log_by_user')?.indexdef).not.toMatch(/WHERE/);
  });

  it('keeps one time index for every listing (migration 0037): audit_log_by_time, no copy of it without checks', async () => {
    const { rows } = await db.pool.query<{ indexname: string }>(
      "select indexname from pg_indexes where tablename = 'audit_log' and indexdef like '%(tenant_id, created_at DESC, id DESC)%'",
    );
    expect(rows.map((row) => row.indexname).sort()).toEqual(['audit_log_by_time', 'audit_log_checks_before_chunks']);
  });

  it.each([
    ['action=PERMISSION_CHECK', { action: 'PERMISSION_CHECK' }, 'action = $1', ['PERMISSION_CHECK']],
    ['action=PERMISSION_CHECK, second page', { action: 'PERMISSION_CHECK', offset: 500 }, 'action = $1', ['PERMISSION_CHECK']],
    ['action=LOGIN', { action: 'LOGIN' }, 'action = $1', ['LOGIN']],
    ['the default listing (PERMISSION_CHECK left out)', { excludeActions: ['PERMISSION_CHECK'] }, 'action <> $1', ['PERMISSION_CHECK']],
    ['the default listing, second page', { excludeActions: ['PERMISSION_CHECK'], offset: 500 }, 'action <> $1', ['PERMISSION_CHECK']],
    ['userId with action=PERMISSION_CHECK', { action: 'PERMISSION_CHECK', userId: 'user-4' }, 'action = $1 and user_id = $2', ['PERMISSION_CHECK', 'user-4']],
    [
      'action=PERMISSION_CHECK within an hour',
      { action: 'PERMISSION_CHECK', from: new Date('2026-01-01T00:05:00Z'), to: new Date('2026-01-01T00:10:00Z') },
      "action = $1 and created_at between '2026-01-01T00:05:00Z' and '2026-01-01T00:10:00Z'",
      ['PERMISSION_CHECK'],
    ],
  ] as const)('%s answers the entries plain SQL finds, newest first, with their count', async (_label, fields, condition, params) => {
    const answer = await auditQueries(client).list('acme', filter(fields));
    const want = await expected(condition, [...params], 500, 'offset' in fields ? fields.offset : 0);
    expect(want.ids.length).toBeGreaterThan(0);
    expect(answer.items.map((item) => item.id)).toEqual(want.ids);
    expect(answer.total).toBe(want.total);
  });
});

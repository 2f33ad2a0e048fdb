import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eraseAuditEntries } from '../../../src/modules/audit/entries-table.ts';
import type { AuditEntry } from '../../../src/modules/audit/entry.ts';
import { chunksOf, CHUNK_MAX_SPAN_MS, insertPermissionCheckChunks } from '../../../src/modules/audit/permission-check-chunks.ts';
import { newestFirst } from '../../../src/modules/audit/permission-check-listing.ts';
import { auditQueries, type AuditLogFilter } from '../../../src/modules/audit/queries.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

const START = Date.parse('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(START + ms).toISOString();

const check = (tenantId: string, i: number): AuditEntry => ({
  id: newId(),
  tenantId,
  action: 'PERMISSION_CHECK',
  userId: `u${i % 5}`,
  resource: null,
  resourceId: null,
  status: i % 9 === 0 ? 'failure' : 'success',
  errorCode: i % 9 === 0 ? 'PERMISSION_DENIED' : null,
  errorMessage: i % 9 === 0 ? 'denied' : null,
  clientIp: `192.0.2.${i % 2}`,
  userAgent: 'agent/1',
  metadata: { object: `document:d${i}`, allowed: i % 2 === 0 },
  // Two a second, and every 50th entry at the very same millisecond as the one before (ties by id).
  createdAt: at(i % 50 === 0 ? (i - 1) * 500 : i * 500),
});

const logged = (tenantId: string, i: number): AuditEntry => ({
  ...check(tenantId, i),
  action: i % 10 === 0 ? 'PERMISSION_CHECK' : i % 3 === 0 ? 'LOGIN' : 'USER_UPDATED',
  resource: 'user',
  resourceId: `u${i % 5}`,
  createdAt: at(i * 4_000 + 7),
});

describe('PERMISSION_CHECK entries stored in chunks (migration 0029)', () => {
  let db: TestDatabase;
  const everything: AuditEntry[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    // audit_log: other actions, and permission checks written before the chunks existed.
    const rows = Array.from({ length: 300 }, (_, i) => logged('acme', i));
    await db.pool.query(
      `insert into audit_log (tenant_id, id, action, user_id, resource, resource_id, status, client_ip, user_agent, created_at)
       select * from unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[])`,
      (['tenantId', 'id', 'action', 'userId', 'resource', 'resourceId', 'status', 'clientIp', 'userAgent', 'createdAt'] as const).map((key) => rows.map((row) => row[key])),
    );
    // Checks flushed 100 at a time, as the writer does; another tenant's alongside.
    const checks = Array.from({ length: 2_000 }, (_, i) => check('acme', i));
    for (let i = 0; i < checks.length; i += 100) {
      await insertPermissionCheckChunks(db.pool, chunksOf([...checks.slice(i, i + 100), check('globex', i)], newId));
    }
    everything.push(...rows, ...checks);
  });
  afterAll(() => db.drop());

  const expected = (filter: AuditLogFilter, entries: readonly AuditEntry[] = everything) => {
    const matching = entries
      .filter(
        (e) =>
          (filter.action === undefined || e.action === filter.action) &&
          (filter.userId === undefined || e.userId === filter.userId) &&
          (!filter.from || e.createdAt >= filter.from.toISOString()) &&
          (!filter.to || e.createdAt <= filter.to.toISOString()) &&
          !filter.excludeActions.includes(e.action),
      )
      .sort(newestFirst);
    return { ids: matching.slice(filter.offset, filter.offset + filter.limit).map((e) => e.id), total: matching.length };
  };
  const filter = (fields: Partial<AuditLogFilter>): AuditLogFilter => ({ offset: 0, limit: 50, excludeActions: [], ...fields });
  // A range whose both ends cut through chunks (a chunk spans up to a minute of entries).
  const range = { from: new Date(at(200_250)), to: new Date(at(700_250)) };

  it('groups a batch by user, client IP and user agent, and splits a chunk spanning more than its maximum', () => {
    const entries = Array.from({ length: 400 }, (_, i) => check('acme', i * 2));
    const chunks = chunksOf(entries, newId);
    const byId = new Map(entries.map((e) => [e.id, e]));
    for (const chunk of chunks) {
      expect(chunk.entries.every(([id]) => byId.get(id)!.userId === chunk.userId && byId.get(id)!.clientIp === chunk.clientIp)).toBe(true);
    }
    expect(chunks.every((chunk) => Date.parse(chunk.lastCreatedAt) - Date.parse(chunk.firstCreatedAt) <= CHUNK_MAX_SPAN_MS)).toBe(true);
    expect(new Set(chunks.map((chunk) => `${chunk.userId} ${chunk.clientIp}`)).size).toBe(5);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.flatMap((chunk) => chunk.entries.map(([id]) => id)).sort()).toEqual(entries.map((e) => e.id).sort());
  });

  it.each([
    ['everything', filter({})],
    ['everything, a page deep in', filter({ offset: 1_337, limit: 29 })],
    ['action=PERMISSION_CHECK (chunks and older audit_log rows)', filter({ action: 'PERMISSION_CHECK' })],
    ['action=PERMISSION_CHECK, limit 500 from offset 1000', filter({ action: 'PERMISSION_CHECK', offset: 1_000, limit: 500 })],
    ['action=PERMISSION_CHECK, one entry', filter({ action: 'PERMISSION_CHECK', limit: 1 })],
    ['userId', filter({ userId: 'u3' })],
    ['userId, a later page', filter({ userId: 'u3', offset: 100, limit: 7 })],
    ['a range cutting through chunks', filter(range)],
    ['a range, userId and a later page', filter({ ...range, userId: 'u2', offset: 40, limit: 30 })],
    ['the last entries of a range', filter({ ...range, offset: 1_010, limit: 50 })],
    ['a range where only audit_log holds entries', filter({ from: new Date(at(1_100_000)), to: new Date(at(1_200_000)) })],
    ['excludeActions=LOGIN', filter({ excludeActions: ['LOGIN'], offset: 10 })],
    ['PERMISSION_CHECK excluded', filter({ excludeActions: ['PERMISSION_CHECK'] })],
    ['action=LOGIN', filter({ action: 'LOGIN' })],
    // Deep offsets: the listing skips the chunks wholly before the page by their headers' counts.
    ['everything, deep across many chunks', filter({ offset: 1_900, limit: 60 })],
    ['everything, the very last entries', filter({ offset: 2_280, limit: 50 })],
    ['action=PERMISSION_CHECK, deep', filter({ action: 'PERMISSION_CHECK', offset: 1_555, limit: 20 })],
    ['userId, deep', filter({ userId: 'u4', offset: 380, limit: 40 })],
    ['a range cutting through chunks, deep', filter({ ...range, offset: 700, limit: 25 })],
    ['a range, userId, deep', filter({ ...range, userId: 'u1', offset: 150, limit: 10 })],
    ['excludeActions=LOGIN, deep', filter({ excludeActions: ['LOGIN'], offset: 2_000, limit: 100 })],
  ])('%s: the entries and count the whole log holds, newest first', async (_label, wanted) => {
    const answer = await auditQueries(db.pool).list('acme', wanted);
    const want = expected(wanted);
    expect(want.ids.length).toBeGreaterThan(0);
    expect(answer.items.map((item) => item.id)).toEqual(want.ids);
    expect(answer.total).toBe(want.total);
    expect(answer.totalCapped).toBe(false);
  });

  it('pages deep into checks stored one per chunk, ties at the same millisecond included, as the whole log does', async () => {
    // One chunk per entry (a low check rate): a deep offset lands among hundreds of chunk headers,
    // and every 50th entry shares its millisecond with the one before (in another chunk).
    const single = Array.from({ length: 700 }, (_, i) => check('initech', i));
    await insertPermissionCheckChunks(db.pool, single.flatMap((entry) => chunksOf([entry], newId)));
    for (const wanted of [
      filter({ offset: 451, limit: 20 }),
      filter({ offset: 649, limit: 1 }),
      filter({ action: 'PERMISSION_CHECK', offset: 600, limit: 100 }),
      filter({ userId: 'u2', offset: 90, limit: 15 }),
      filter({ ...range, offset: 200, limit: 40 }),
      filter({ ...range, userId: 'u0', offset: 40, limit: 30 }),
    ]) {
      const answer = await auditQueries(db.pool).list('initech', wanted);
      const want = expected(wanted, single);
      expect(want.ids.length).toBeGreaterThan(0);
      expect(answer.items.map((item) => item.id)).toEqual(want.ids);
      expect(answer.total).toBe(want.total);
    }
  });

  it('lists a chunk entry with every field of the entry recorded', async () => {
    const listed = (await auditQueries(db.pool).list('acme', filter({ action: 'PERMISSION_CHECK', limit: 500 }))).items;
    const item = listed.find((entry) => entry.errorCode !== null && entry.resource === null)!;
    const recorded = everything.find((e) => e.id === item.id)!;
    const { tenantId: _tenant, ...fields } = recorded;
    expect(item).toEqual(fields);
  });

  it('stores each chunk in its own row, its entries exactly as JSON.stringify writes them, whatever characters they hold', async () => {
    const odd = ['quote " and backslash \\ ', 'line\nbreak\ttab', 'unicode é 漢字 \u{1F600}', '{"looks":["like","json"]}', 'comma, brace } bracket ]'];
    const entries = odd.flatMap((text, i) => [
      { ...check('umbrella', i), userId: `user ${text}`, userAgent: text, metadata: { object: `document:${text}`, nested: { text, list: [text, null, 1.5] } } },
      { ...check('umbrella', i), userId: null, clientIp: null, errorMessage: text },
    ]);
    const chunks = chunksOf(entries, newId);
    expect(chunks.length).toBeGreaterThan(odd.length);
    await insertPermissionCheckChunks(db.pool, chunks);
    const rows = (await db.pool.query("select chunk_id, user_id, user_agent, entry_count, entries from audit_permission_checks where tenant_id = 'umbrella'")).rows;
    expect(new Map(rows.map((row) => [row.chunk_id, [row.user_id, row.user_agent, row.entry_count, row.entries]]))).toEqual(
      new Map(chunks.map((chunk) => [chunk.chunkId, [chunk.userId, chunk.userAgent, chunk.entries.length, JSON.stringify(chunk.entries)]])),
    );
  });

  it("keeps each tenant's entries to itself", async () => {
    const answer = await auditQueries(db.pool).list('globex', filter({ limit: 500 }));
    expect(answer.total).toBe(20);
    expect(answer.items.every((item) => everything.every((e) => e.id !== item.id))).toBe(true);
  });

  it('refuses UPDATE, DELETE and TRUNCATE in plain SQL; the erasure writer may change client IP and user agent only', async () => {
    await expect(db.pool.query("update audit_permission_checks set user_id = 'x' where tenant_id = 'globex'")).rejects.toThrow(/append-only \(UPDATE/);
    await expect(db.pool.query("update audit_permission_checks set client_ip = 'x' where tenant_id = 'globex'")).rejects.toThrow(/append-only \(UPDATE/);
    await expect(db.pool.query("delete from audit_permission_checks where tenant_id = 'globex'")).rejects.toThrow(/append-only \(DELETE/);
    await expect(db.pool.query('truncate audit_permission_checks')).rejects.toThrow(/append-only \(TRUNCATE/);
    const client = await db.pool.connect();
    try {
      await client.query('begin');
      await client.query("select set_config('iam.audit_erasure', 'on', true)");
      await expect(client.query("update audit_permission_checks set entries = '[]' where tenant_id = 'globex'")).rejects.toThrow(/personal data only/);
      await client.query('rollback');
    } finally {
      client.release();
    }
  });

  it("erasing a user masks the client IP and user agent of that user's checks, and nothing else", async () => {
    const before = (await db.pool.query('select * from audit_permission_checks order by tenant_id, chunk_id')).rows;
    const client = await db.pool.connect();
    try {
      await client.query('begin');
      await eraseAuditEntries(client, { tenantId: 'acme', resource: 'user', resourceId: 'u4' }, ['email']);
      await client.query('commit');
    } finally {
      client.release();
    }
    const after = (await db.pool.query('select * from audit_permission_checks order by tenant_id, chunk_id')).rows;
    expect(after.map((row) => ({ ...row, client_ip: null, user_agent: null }))).toEqual(before.map((row) => ({ ...row, client_ip: null, user_agent: null })));
    const erased = (row: { tenant_id: string; user_id: string }) => row.tenant_id === 'acme' && row.user_id === 'u4';
    expect(after.filter(erased).every((row) => row.client_ip === '[ERASED]' && row.user_agent === '[ERASED]')).toBe(true);
    expect(after.filter((row) => !erased(row))).toEqual(before.filter((row) => !erased(row)));
    const listed = await auditQueries(db.pool).list('acme', filter({ action: 'PERMISSION_CHECK', userId: 'u4', limit: 500 }));
    expect(listed.items.length).toBeGreaterThan(0);
    expect(listed.items.every((item) => item.clientIp === '[ERASED]' && item.userAgent === '[ERASED]')).toBe(true);
  });
});

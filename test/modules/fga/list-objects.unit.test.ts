import { describe, expect, it } from 'vitest';
import { parseTuple } from '../../../src/modules/fga/tuple.ts';
import { checkOf, engineFor, listOf } from './support/fga-fixture.ts';

const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, user:*, group#member]
type folder
  relations
    define parent: [folder]
    define viewer: [user, group#member] or viewer from parent
type document
  relations
    define parent: [folder]
    define owner: [user]
    define blocked: [user, group#member]
    define allowed: [user]
    define viewer: [user, user:*, group#member] or owner or viewer from parent
    define reader: viewer but not blocked
    define approver: owner and allowed
`;

const TUPLES = [
  'group:eng#member@user:anne',
  'group:all#member@group:eng#member',
  'group:all#member@group:all#member',
  'folder:root#viewer@group:all#member',
  'folder:sub#parent@folder:root',
  'folder:deep#parent@folder:sub',
  'document:d1#parent@folder:deep',
  'document:d2#parent@folder:root',
  'document:d3#viewer@user:anne',
  'document:d3#viewer@user:anne',
  'document:d4#owner@user:anne',
  'document:d5#viewer@user:*',
  'document:d6#viewer@user:bob',
  'document:d1#blocked@group:eng#member',
  'document:d4#allowed@user:anne',
  'document:d3#owner@user:anne',
];

describe.each([
  ['a synchronous reader', false],
  ['an asynchronous reader', true],
])('list-objects over %s', (_name, asyncReader) => {
  const { engine } = engineFor(MODEL, TUPLES, { asyncReader });

  it('finds objects through usersets, nested groups, parents, computed relations and wildcards, sorted, once', async () => {
    expect(await engine.listObjects(listOf('document#viewer', 'user:anne'))).toEqual(['d1', 'd2', 'd3', 'd4', 'd5']);
    expect(await engine.listObjects(listOf('folder#viewer', 'user:anne'))).toEqual(['deep', 'root', 'sub']);
  });

  it('confirms candidates from exclusions and intersections with a check', async () => {
    expect(await engine.listObjects(listOf('document#reader', 'user:anne'))).toEqual(['d2', 'd3', 'd4', 'd5']);
    expect(await engine.listObjects(listOf('document#approver', 'user:anne'))).toEqual(['d4']);
  });

  it('answers for usersets and for the wildcard as subjects', async () => {
    expect(await engine.listObjects(listOf('document#viewer', 'group:eng#member'))).toEqual(['d1', 'd2']);
    expect(await engine.listObjects(listOf('group#member', 'group:eng#member'))).toEqual(['all', 'eng']);
    expect(await engine.listObjects(listOf('document#viewer', 'user:*'))).toEqual(['d5']);
  });

  it('agrees with check on every object', async () => {
    for (const relation of ['viewer', 'reader', 'approver', 'owner']) {
      for (const user of ['anne', 'bob', 'zoe']) {
        const listed = await engine.listObjects(listOf(`document#${relation}`, `user:${user}`));
        for (const id of ['d1', 'd2', 'd3', 'd4', 'd5', 'd6']) {
          const { allowed } = await engine.check(checkOf(`document:${id}#${relation}@user:${user}`));
          expect(listed.includes(id), `${relation} ${user} ${id}`).toBe(allowed);
        }
      }
    }
  });

  it('answers each walk for its own subject, whether walks run at once or one after another (their maps are reused)', async () => {
    const [anne, bob] = await Promise.all([engine.listObjects(listOf('document#viewer', 'user:anne')), engine.listObjects(listOf('document#viewer', 'user:bob'))]);
    expect(anne).toEqual(['d1', 'd2', 'd3', 'd4', 'd5']);
    expect(bob).toEqual(['d5', 'd6']);
    expect(await engine.listObjects(listOf('document#viewer', 'user:zoe'))).toEqual(['d5']);
  });

  it('includes contextual tuples', async () => {
    const request = { ...listOf('document#viewer', 'user:bob'), contextualTuples: [parseTuple('document:d9#owner@user:bob')] };
    expect(await engine.listObjects(request)).toEqual(['d5', 'd6', 'd9']);
  });

  it('rejects unknown types and relations', async () => {
    await expect(engine.listObjects(listOf('report#viewer', 'user:anne'))).rejects.toMatchObject({ code: 'INVALID_TYPE' });
    await expect(engine.listObjects(listOf('document#approvers', 'user:anne'))).rejects.toMatchObject({ code: 'INVALID_RELATION' });
    await expect(engine.listObjects(listOf('document#viewer', 'robot:r2'))).rejects.toMatchObject({ code: 'INVALID_TYPE' });
  });
});

describe('list-objects depth', () => {
  it('fails like check when the only path needs 25 dispatches', async () => {
    const groups = Array.from({ length: 26 }, (_, index) => `group:g${index + 1}#member@group:g${index}#member`);
    const model = 'type user\ntype group\n  relations\n    define member: [user, group#member]';
    const { engine } = engineFor(model, ['group:g0#member@user:maria', ...groups]);
    await expect(engine.listObjects(listOf('group#member', 'user:maria'))).rejects.toMatchObject({ code: 'MAX_DEPTH_EXCEEDED' });
    await expect(engine.check(checkOf('group:g25#member@user:maria'))).rejects.toMatchObject({ code: 'MAX_DEPTH_EXCEEDED' });
    expect((await engine.check(checkOf('group:g24#member@user:maria'))).allowed).toBe(true);
  });
});

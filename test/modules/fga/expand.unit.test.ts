import { describe, expect, it } from 'vitest';
import { FgaError } from '../../../src/modules/fga/errors.ts';
import { parseTuple } from '../../../src/modules/fga/tuple.ts';
import { engineFor } from './support/fga-fixture.ts';

const MODEL = `type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define viewer: [user]
type document
  relations
    define parent: [folder]
    define owner: [user]
    define blocked: [user]
    define viewer: [user, user:*, group#member] or owner or viewer from parent
    define editor: owner and viewer
    define reader: viewer but not blocked
`;

const TUPLES = [
  'document:1#viewer@user:anne',
  'document:1#viewer@user:*',
  'document:1#viewer@group:eng#member',
  'document:1#owner@user:olga',
  'document:1#parent@folder:a',
  'document:1#parent@folder:b',
];

describe('expand', () => {
  const { engine, store } = engineFor(MODEL, TUPLES);
  const expand = (objectId: string, relation: string) => engine.expand({ objectType: 'document', objectId, relation });

  it('expands a union one level: direct users, computed usersets, tuple-to-usersets', async () => {
    expect((await expand('1', 'viewer')).tree).toEqual({
      type: 'union',
      relation: 'viewer',
      object: 'document:1',
      children: [
        { type: 'this', relation: 'viewer', object: 'document:1', users: ['group:eng#member', 'user:*', 'user:anne'] },
        { type: 'computedUserset', relation: 'owner', object: 'document:1' },
        { type: 'tupleToUserset', relation: 'parent', object: 'document:1', users: ['folder:a#viewer', 'folder:b#viewer'] },
      ],
    });
  });

  it('expands intersections and exclusions into their operands', async () => {
    expect((await expand('1', 'editor')).tree).toEqual({
      type: 'intersection',
      relation: 'editor',
      object: 'document:1',
      children: [
        { type: 'computedUserset', relation: 'owner', object: 'document:1' },
        { type: 'computedUserset', relation: 'viewer', object: 'document:1' },
      ],
    });
    expect((await expand('1', 'reader')).tree.children?.map((child) => child.type)).toEqual(['computedUserset', 'computedUserset']);
  });

  it('expands a relation of an unknown object to no users', async () => {
    expect((await expand('9', 'owner')).tree).toEqual({ type: 'this', relation: 'owner', object: 'document:9', users: [] });
  });

  it('leaves out tuples the model does not allow and includes contextual tuples', async () => {
    store.add(parseTuple('document:1#owner@group:eng#member'));
    const contextualTuples = [parseTuple('document:1#owner@user:carl')];
    const { tree } = await engine.expand({ objectType: 'document', objectId: '1', relation: 'owner', contextualTuples });
    expect(tree.users).toEqual(['user:carl', 'user:olga']);
  });

  it('rejects unknown types and relations', async () => {
    await expect(engine.expand({ objectType: 'report', objectId: '1', relation: 'viewer' })).rejects.toBeInstanceOf(FgaError);
    await expect(expand('1', 'approver')).rejects.toMatchObject({ code: 'INVALID_RELATION' });
  });
});

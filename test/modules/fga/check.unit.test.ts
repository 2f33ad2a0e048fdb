import { describe, expect, it } from 'vitest';
import { AuthorizationEngine } from '../../../src/modules/fga/engine/authorization-engine.ts';
import { FgaError } from '../../../src/modules/fga/errors.ts';
import { compileModel } from '../../../src/modules/fga/model.ts';
import { parseTuple } from '../../../src/modules/fga/tuple.ts';
import { checkOf, engineFor } from './support/fga-fixture.ts';

const DRIVE = `model
  schema 1.1
type user
type group
  relations
    define member: [user, user:*, group#member]
type folder
  relations
    define parent: [folder]
    define owner: [user]
    define viewer: [user, group#member] or owner or viewer from parent
type document
  relations
    define parent: [folder, group]
    define owner: [user]
    define editor: [user, group#member] or owner
    define blocked: [user, group#member]
    define viewer: [user, user:*, group#member] or editor or viewer from parent
    define commenter: editor and viewer
    define reader: viewer but not blocked
`;

const DRIVE_TUPLES = [
  'group:eng#member@user:anne',
  'group:all#member@group:eng#member',
  'folder:root#owner@user:olga',
  'folder:sub#parent@folder:root',
  'folder:sub#viewer@group:all#member',
  'document:plan#parent@folder:sub',
  'document:plan#editor@user:bob',
  'document:plan#blocked@user:anne',
  'document:memo#owner@user:carl',
  'document:memo#parent@group:eng',
  'document:public#viewer@user:*',
];

const allowed = async (engine: AuthorizationEngine, text: string) => (await engine.check(checkOf(text))).allowed;

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FgaError) return error.code;
    throw error;
  }
  return 'no error';
}

/** resource#a1: [user], a2: [resource#a1] ... aN: [resource#a(N-1)], with one chain of tuples on resource:1. */
function chain(length: number, options: { maxDepth?: number; asyncReader?: boolean } = {}) {
  const relations = ['    define a1: [user]'];
  const tuples = ['resource:1#a1@user:maria'];
  for (let index = 2; index <= length; index += 1) {
    relations.push(`    define a${index}: [resource#a${index - 1}]`);
    tuples.push(`resource:1#a${index}@resource:1#a${index - 1}`);
  }
  return engineFor(`type user\ntype resource\n  relations\n${relations.join('\n')}`, tuples, options);
}

describe.each([
  ['a synchronous reader', false],
  ['an asynchronous reader', true],
])('check over %s', (_name, asyncReader) => {
  const { engine } = engineFor(DRIVE, DRIVE_TUPLES, { asyncReader });

  it.each([
    ['a direct tuple (this)', 'document:plan#editor@user:bob', true],
    ['a computed userset', 'document:memo#editor@user:carl', true],
    ['a union branch', 'document:plan#viewer@user:bob', true],
    ['a tuple-to-userset over two parent levels and nested groups', 'document:plan#viewer@user:anne', true],
    ['a computed userset inside a tuple-to-userset', 'document:plan#viewer@user:olga', true],
    ['a parent type without the computed relation (skipped)', 'document:memo#viewer@user:anne', false],
    ['an intersection with both operands', 'document:plan#commenter@user:bob', true],
    ['an intersection missing one operand', 'document:plan#commenter@user:anne', false],
    ['an exclusion whose subtract does not apply', 'document:plan#reader@user:olga', true],
    ['an exclusion whose subtract applies', 'document:plan#reader@user:anne', false],
    ['a wildcard granting any user', 'document:public#viewer@user:zoe', true],
    ['the wildcard checked as itself', 'document:public#viewer@user:*', true],
    ['a wildcard not granting a userset', 'document:public#viewer@group:eng#member', false],
    ['a userset subject written directly', 'folder:sub#viewer@group:all#member', true],
    ['a userset subject contained in a written userset', 'folder:sub#viewer@group:eng#member', true],
    ['a userset subject checked against itself', 'group:eng#member@group:eng#member', true],
    ['an unknown object', 'document:nothing#viewer@user:anne', false],
    ['an unknown user', 'document:plan#viewer@user:nobody', false],
  ])('%s', async (_case, text, expected) => {
    expect(await allowed(engine, text)).toBe(expected);
  });

  it('uses contextual tuples for one request only', async () => {
    const request = { ...checkOf('document:memo#viewer@user:dora'), contextualTuples: [parseTuple('document:memo#viewer@user:dora')] };
    expect((await engine.check(request)).allowed).toBe(true);
    expect(await allowed(engine, 'document:memo#viewer@user:dora')).toBe(false);
  });

  it('stops at the depth limit: 24 dispatches pass, 25 fail with MAX_DEPTH_EXCEEDED', async () => {
    expect(await allowed(chain(25, { asyncReader }).engine, 'resource:1#a25@user:maria')).toBe(true);
    expect(await codeOf(chain(26, { asyncReader }).engine.check(checkOf('resource:1#a26@user:maria')))).toBe('MAX_DEPTH_EXCEEDED');
    const shallow = chain(6, { asyncReader, maxDepth: 4 }).engine;
    expect(await codeOf(shallow.check(checkOf('resource:1#a6@user:maria')))).toBe('MAX_DEPTH_EXCEEDED');
  });

  it('answers MAX_DEPTH_EXCEEDED for computed usersets nested beyond 500 on one object, which no dispatch counts', async () => {
    const relations = ['define r0: [user]', ...Array.from({ length: 600 }, (_, i) => `define r${i + 1}: r${i}`)];
    const { engine } = engineFor(`model\n  schema 1.1\ntype user\ntype doc\n  relations\n${relations.map((line) => `    ${line}`).join('\n')}`, ['doc:d#r0@user:maria'], { asyncReader });
    expect(await allowed(engine, 'doc:d#r499@user:maria')).toBe(true);
    expect(await codeOf(engine.check(checkOf('doc:d#r500@user:maria')))).toBe('MAX_DEPTH_EXCEEDED');
  });
});

describe('check semantics', () => {
  it('ignores a branch that exceeds the depth limit when another branch grants', async () => {
    const relations = ['define a1: [user]', 'define a2: [resource#a1]', 'define a3: [resource#a2]', 'define both: a3 or a1'];
    const { engine } = engineFor(
      `type user\ntype resource\n  relations\n${relations.map((line) => `    ${line}`).join('\n')}`,
      ['resource:1#a1@user:maria', 'resource:1#a2@resource:1#a1', 'resource:1#a3@resource:1#a2'],
      { maxDepth: 1 },
    );
    expect(await allowed(engine, 'resource:1#both@user:maria')).toBe(true);
    expect(await codeOf(engine.check(checkOf('resource:1#a3@user:maria')))).toBe('MAX_DEPTH_EXCEEDED');
  });

  it('answers false on cycles instead of failing', async () => {
    const { engine } = engineFor('type user\ntype group\n  relations\n    define member: [user, group#member]', [
      'group:a#member@group:b#member',
      'group:b#member@group:c#member',
      'group:c#member@group:a#member',
      'group:c#member@user:zed',
    ]);
    expect(await allowed(engine, 'group:a#member@user:anne')).toBe(false);
    expect(await allowed(engine, 'group:a#member@user:zed')).toBe(true);
  });

  it('denies an exclusion whose subtract runs into a cycle (as OpenFGA does)', async () => {
    const { engine } = engineFor(
      `type user
type document
  relations
    define restricted: [user, document#viewer]
    define viewer: [user] but not restricted`,
      ['document:1#viewer@user:jon', 'document:1#restricted@document:1#viewer'],
    );
    expect(await allowed(engine, 'document:1#viewer@user:jon')).toBe(false);
  });

  it('ignores stored tuples that the model no longer allows', async () => {
    const { engine: before, store } = engineFor('type user\ntype document\n  relations\n    define viewer: [user]', [
      'document:1#viewer@user:jon',
    ]);
    expect(await allowed(before, 'document:1#viewer@user:jon')).toBe(true);
    const { typesystem } = compileModel('type user\ntype employee\ntype document\n  relations\n    define viewer: [employee]');
    expect(await allowed(new AuthorizationEngine(typesystem, store), 'document:1#viewer@user:jon')).toBe(false);
  });

  it('rejects requests the model cannot answer', async () => {
    const { engine } = engineFor(DRIVE, DRIVE_TUPLES);
    expect(await codeOf(engine.check(checkOf('report:1#viewer@user:anne')))).toBe('INVALID_TYPE');
    expect(await codeOf(engine.check(checkOf('document:1#approver@user:anne')))).toBe('INVALID_RELATION');
    expect(await codeOf(engine.check(checkOf('document:1#viewer@robot:r2')))).toBe('INVALID_TYPE');
    expect(await codeOf(engine.check(checkOf('document:1#viewer@group:eng#owner')))).toBe('INVALID_RELATION');
    expect(await codeOf(engine.check({ ...checkOf('document:1#viewer@user:anne'), objectId: '*' }))).toBe('VALIDATION_ERROR');
    expect(await codeOf(engine.check({ ...checkOf('document:1#viewer@user:anne'), subjectId: 'a b' }))).toBe('VALIDATION_ERROR');
    const contextualTuples = [parseTuple('document:1#owner@group:eng#member')];
    const contextual = engine.check({ ...checkOf('document:1#viewer@user:anne'), contextualTuples });
    await expect(contextual).rejects.toMatchObject({ code: 'INVALID_SUBJECT_TYPE', tuple: 'document:1#owner@group:eng#member' });
  });
});

describe('check with explain', () => {
  const { engine } = engineFor(DRIVE, DRIVE_TUPLES);

  it('returns the resolution path that granted access', async () => {
    const { allowed: granted, resolution } = await engine.check({ ...checkOf('document:plan#viewer@user:anne'), explain: true });
    expect(granted).toBe(true);
    expect(resolution).toMatchObject({ type: 'union', relation: 'viewer', object: 'document:plan', result: true });
    const [direct, editor, fromParent] = resolution?.children ?? [];
    expect(direct).toEqual({ type: 'this', relation: 'viewer', object: 'document:plan', result: false });
    expect(editor).toMatchObject({ type: 'computedUserset', relation: 'editor', result: false });
    expect(fromParent).toMatchObject({
      type: 'tupleToUserset',
      relation: 'parent',
      object: 'document:plan',
      result: true,
      tupleFound: 'document:plan#parent@folder:sub',
    });
    const folderViewer = fromParent?.children?.[0];
    expect(folderViewer).toMatchObject({ type: 'union', relation: 'viewer', object: 'folder:sub', result: true });
    expect(folderViewer?.children?.[0]).toMatchObject({
      type: 'this',
      result: true,
      tupleFound: 'folder:sub#viewer@group:all#member',
    });
    expect(folderViewer?.children?.[0]?.children?.[0]).toMatchObject({
      type: 'this',
      relation: 'member',
      object: 'group:all',
      result: true,
      tupleFound: 'group:all#member@group:eng#member',
    });
  });

  it('shows every branch evaluated for a denial, with the same answer as without explain', async () => {
    const { allowed: granted, resolution } = await engine.check({ ...checkOf('document:plan#reader@user:anne'), explain: true });
    expect(granted).toBe(await allowed(engine, 'document:plan#reader@user:anne'));
    expect(resolution).toMatchObject({ type: 'exclusion', relation: 'reader', result: false });
    expect(resolution?.children?.map((child) => [child.type, child.relation, child.result])).toEqual([
      ['computedUserset', 'viewer', true],
      ['computedUserset', 'blocked', true],
    ]);
  });

  it('shows a sub-check answered earlier in the same check as a leaf, keeping the tree linear', async () => {
    const { resolution } = await engine.check({ ...checkOf('document:plan#commenter@user:bob'), explain: true });
    expect(resolution).toMatchObject({ type: 'intersection', relation: 'commenter', result: true });
    const viewer = resolution?.children?.[1]?.children?.[0];
    expect(viewer?.children?.[1]).toMatchObject({ type: 'computedUserset', relation: 'editor', result: true });
    expect(viewer?.children?.[1]?.children?.[0]).toEqual({
      type: 'union',
      relation: 'editor',
      object: 'document:plan',
      result: true,
      note: 'evaluated earlier in this check',
    });
  });

  it('marks cycles in the tree', async () => {
    const { engine: cyclic } = engineFor('type user\ntype group\n  relations\n    define member: [user, group#member]', [
      'group:a#member@group:b#member',
      'group:b#member@group:a#member',
    ]);
    const { resolution } = await cyclic.check({ ...checkOf('group:a#member@user:anne'), explain: true });
    expect(resolution?.children?.[0]?.children?.[0]).toMatchObject({ object: 'group:a', result: false, note: 'cycle detected' });
  });
});

import { describe, expect, it } from 'vitest';
import { FgaError } from '../../../src/modules/fga/errors.ts';
import { compileModel } from '../../../src/modules/fga/model.ts';
import type { AuthorizationSchema } from '../../../src/modules/fga/schema.ts';
import { TypeSystem } from '../../../src/modules/fga/typesystem.ts';

function validationError(dsl: string): string {
  try {
    compileModel(dsl);
  } catch (error) {
    if (error instanceof FgaError && error.code === 'DSL_VALIDATION_ERROR') return error.message;
    throw error;
  }
  throw new Error('expected the model to be rejected');
}

const model = (relations: string) =>
  `model\n  schema 1.1\ntype user\ntype folder\n  relations\n    define viewer: [user]\ntype document\n  relations\n${relations}`;

describe('TypeSystem validation', () => {
  it.each([
    [
      'an undefined type restriction',
      '    define viewer: [employee]',
      "relation 'document#viewer' allows undefined type 'employee'",
    ],
    [
      'an undefined userset restriction',
      '    define viewer: [folder#owner]',
      "relation 'document#viewer' allows undefined userset 'folder#owner'",
    ],
    [
      'an undefined computed relation',
      '    define viewer: [user] or editor',
      "relation 'document#viewer' refers to undefined relation 'document#editor'",
    ],
    [
      'an undefined tupleset',
      '    define viewer: viewer from parent',
      "relation 'document#viewer' reads undefined tupleset relation 'document#parent'",
    ],
    [
      'a tupleset that is not direct only',
      '    define owner: [folder]\n    define parent: [folder] or owner\n    define viewer: viewer from parent',
      "relation 'document#parent' is used as a tupleset ('from parent') and must be a direct relation only",
    ],
    [
      'a tupleset allowing a userset',
      '    define parent: [folder#viewer]\n    define viewer: viewer from parent',
      "relation 'document#parent' is used as a tupleset and may only allow plain types, not 'folder#viewer'",
    ],
    [
      'a tupleset allowing a wildcard',
      '    define parent: [folder:*]\n    define viewer: viewer from parent',
      "relation 'document#parent' is used as a tupleset and may only allow plain types, not 'folder:*'",
    ],
    [
      'a computed relation missing on every tupleset type',
      '    define parent: [folder]\n    define viewer: editor from parent',
      "relation 'document#viewer': 'editor' is not a relation of any type allowed on 'document#parent'",
    ],
    [
      'a type listed twice in restrictions',
      '    define viewer: [user, user]',
      "relation 'document#viewer' lists type 'user' twice",
    ],
    ['two relations defined by each other', '    define viewer: editor\n    define editor: viewer', 'has no entrypoint'],
    ['a relation defined by itself', '    define viewer: viewer', 'has no entrypoint'],
    [
      'a userset of itself as the only type',
      '    define viewer: [document#viewer]',
      "relation 'document#viewer' has no entrypoint",
    ],
    [
      'an intersection with an operand without entrypoint',
      '    define a: [user]\n    define b: b and a',
      "relation 'document#b' has no entrypoint",
    ],
    [
      'an exclusion whose subtract has no entrypoint',
      '    define a: [user]\n    define b: a but not b',
      "relation 'document#b' has no entrypoint",
    ],
    [
      'a computed cycle even with an entrypoint',
      '    define a: [user] or b\n    define b: a',
      "relations of type 'document' define each other in a cycle: a -> b -> a",
    ],
  ])('rejects %s', (_name, relations, message) => {
    expect(validationError(model(relations))).toContain(message);
  });

  it('rejects duplicate types and reserved names', () => {
    expect(validationError('type user\ntype user')).toBe("type 'user' is defined twice");
    expect(validationError('type self')).toBe("type name 'self' is reserved");
    expect(validationError('type user\ntype doc\n  relations\n    define this: [user]')).toBe("relation name 'doc#this' is reserved");
  });

  it('accepts recursion that has a way out: nested usersets, parent chains, cycles through tuples', () => {
    expect(() =>
      compileModel(`type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define parent: [folder]
    define viewer: [user, group#member] or viewer from parent
type document
  relations
    define editor: [user, document#viewer]
    define viewer: [document#editor] or editor
    define restricted: [user, document#viewer]
    define allowed: [user] but not restricted`),
    ).not.toThrow();
  });

  it('validates a long chain of computed relations without deep recursion', () => {
    const relations = ['    define r0: [user]'];
    for (let index = 1; index < 20_000; index += 1) relations.push(`    define r${index}: r${index - 1}`);
    const { typesystem } = compileModel(`type user\ntype doc\n  relations\n${relations.join('\n')}`);
    expect(typesystem.relation('doc', 'r19999')?.rewrite).toEqual({ type: 'computedUserset', relation: 'r19998' });
  });

  it('rejects malformed stored schemas', () => {
    const schema = (relations: Record<string, unknown>, directTypes: unknown[] = []): AuthorizationSchema =>
      ({
        schemaVersion: '1.1',
        typeDefinitions: [
          { type: 'user', relations: {}, metadata: { relations: {} } },
          { type: 'doc', relations, metadata: { relations: { viewer: { directlyRelatedUserTypes: directTypes } } } },
        ],
      }) as AuthorizationSchema;
    const reject = (value: AuthorizationSchema) => () => TypeSystem.fromSchema(value);
    expect(reject(schema({ viewer: { type: 'magic' } }))).toThrow("relation 'doc#viewer' has an unknown rewrite 'magic'");
    expect(reject(schema({ viewer: { type: 'union', children: [] } }))).toThrow("relation 'doc#viewer' has an empty union");
    expect(reject(schema({ viewer: { type: 'this' } }))).toThrow("relation 'doc#viewer' is directly assignable but allows no type");
    const listsTypes = schema({ viewer: { type: 'computedUserset', relation: 'owner' }, owner: { type: 'this' } }, [{ type: 'user' }]);
    expect(reject(listsTypes)).toThrow("relation 'doc#viewer' is not directly assignable but lists types");
    expect(reject(schema({ 'bad name': { type: 'this' } }))).toThrow("relation name 'doc#bad name' is not a valid identifier");
    expect(reject({ ...schema({}), schemaVersion: '1.0' as '1.1' })).toThrow("unsupported schema version '1.0'");
  });
});

describe('TypeSystem lookups', () => {
  const { typesystem } = compileModel(`type user
type group
  relations
    define member: [user, user:*, group#member]
type doc
  relations
    define parent: [group]
    define viewer: member from parent`);

  it('answers type and relation lookups', () => {
    expect(typesystem.types()).toEqual(['user', 'group', 'doc']);
    expect(typesystem.hasType('group')).toBe(true);
    expect(typesystem.hasType('folder')).toBe(false);
    expect(typesystem.relation('doc', 'owner')).toBeUndefined();
    expect([...typesystem.relationsOf('doc')].map((relation) => relation.name)).toEqual(['parent', 'viewer']);
  });

  it('splits type restrictions by kind and knows tuplesets', () => {
    const member = typesystem.relation('group', 'member');
    expect(member?.directTypes).toEqual(['user']);
    expect(member?.wildcardTypes).toEqual(['user']);
    expect(member?.usersetTypes).toEqual([{ type: 'group', relation: 'member' }]);
    expect(member?.allowsSubject({ type: 'user', id: 'anne' })).toBe(true);
    expect(member?.allowsSubject({ type: 'user', id: '*' })).toBe(true);
    expect(member?.allowsSubject({ type: 'group', id: 'eng', relation: 'member' })).toBe(true);
    expect(member?.allowsSubject({ type: 'group', id: 'eng' })).toBe(false);
    expect(typesystem.relation('doc', 'parent')?.isTupleset).toBe(true);
    expect(member?.isTupleset).toBe(false);
  });
});

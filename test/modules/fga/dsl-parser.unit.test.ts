import { describe, expect, it } from 'vitest';
import { parseDsl } from '../../../src/modules/fga/dsl/parser.ts';
import { DslUnsupportedError, FgaError } from '../../../src/modules/fga/errors.ts';

function parseError(dsl: string): FgaError {
  try {
    parseDsl(dsl);
  } catch (error) {
    if (error instanceof FgaError) return error;
    throw error;
  }
  throw new Error('expected the DSL to be rejected');
}

describe('parseDsl', () => {
  it('produces the schema object with every rewrite kind and the type restrictions as metadata', () => {
    const schema = parseDsl(`model
  schema 1.1

# people and teams
type user
type group
  relations
    define member: [user, user:*, group#member] # nested groups
type folder
  relations
    define viewer: [user]
type document
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user] or owner
    define blocked: [user]
    define viewer: ([user] or editor or viewer from parent) but not blocked
    define auditor: editor and (viewer or owner)
`);
    expect(schema.schemaVersion).toBe('1.1');
    expect(schema.typeDefinitions.map((definition) => definition.type)).toEqual(['user', 'group', 'folder', 'document']);
    const group = schema.typeDefinitions[1];
    expect(group?.relations).toEqual({ member: { type: 'this' } });
    expect(group?.metadata.relations.member?.directlyRelatedUserTypes).toEqual([
      { type: 'user' },
      { type: 'user', wildcard: true },
      { type: 'group', relation: 'member' },
    ]);
    const document = schema.typeDefinitions[3];
    expect(document?.relations.editor).toEqual({
      type: 'union',
      children: [{ type: 'this' }, { type: 'computedUserset', relation: 'owner' }],
    });
    expect(document?.relations.viewer).toEqual({
      type: 'exclusion',
      base: {
        type: 'union',
        children: [
          { type: 'this' },
          { type: 'computedUserset', relation: 'editor' },
          { type: 'tupleToUserset', tupleset: 'parent', computedUserset: 'viewer' },
        ],
      },
      subtract: { type: 'computedUserset', relation: 'blocked' },
    });
    expect(document?.relations.auditor).toEqual({
      type: 'intersection',
      children: [
        { type: 'computedUserset', relation: 'editor' },
        { type: 'union', children: [{ type: 'computedUserset', relation: 'viewer' }, { type: 'computedUserset', relation: 'owner' }] },
      ],
    });
    expect(document?.metadata.relations.owner?.directlyRelatedUserTypes).toEqual([{ type: 'user' }]);
    expect(document?.metadata.relations.auditor?.directlyRelatedUserTypes).toEqual([]);
  });

  it('accepts a model without header, type restrictions over several lines and keyword-like type names', () => {
    const schema = parseDsl(`type user
type module
type doc
  relations
    define viewer: [
      user,
      module
    ]
`);
    const viewer = schema.typeDefinitions[2]?.metadata.relations.viewer;
    expect(viewer?.directlyRelatedUserTypes).toEqual([{ type: 'user' }, { type: 'module' }]);
  });

  it.each([
    ['missing colon', 'type user\ntype doc\n  relations\n    define viewer [user]', "line 4: expected ':' after relation name"],
    [
      'mixed operators',
      'type doc\n  relations\n    define a: [doc]\n    define b: a or a and a',
      "line 4: cannot mix 'or' and 'and' without parentheses",
    ],
    [
      'two exclusions',
      'type doc\n  relations\n    define a: [doc]\n    define b: a but not a but not a',
      "line 4: 'but not' takes one operand",
    ],
    ['but without not', 'type doc\n  relations\n    define a: [doc] but a', "line 3: expected 'not' after 'but'"],
    [
      'direct types not first',
      'type doc\n  relations\n    define a: [doc]\n    define b: a or [doc]',
      'line 4: direct type restrictions [...] must come first',
    ],
    ['define outside relations', 'type doc\n  define a: [doc]', "line 2: 'define' must follow a 'relations' line"],
    ['empty relations block', 'type doc\n  relations\ntype user', "line 3: expected 'define' after 'relations'"],
    ['unclosed bracket', 'type doc\n  relations\n    define a: [doc\n', "line 4: expected ',' or ']' between type restrictions"],
    [
      'unclosed parenthesis',
      'type doc\n  relations\n    define a: [doc]\n    define b: (a or a',
      "line 4: expected ')' to close the parenthesis",
    ],
    ['stray character', 'type doc\n  relations\n    define a: [doc] & a', "line 3: unexpected '&' after the relation definition"],
    ['operator word as a name', 'type doc\n  relations\n    define or: [doc]', 'line 3: expected a relation name'],
    ['statement that is not a type', 'model\n  schema 1.1\ntypo doc', "line 3: expected 'type'"],
    ['wildcard typo', 'type user\ntype doc\n  relations\n    define a: [user:alice]', "line 4: expected '*' after 'user:'"],
  ])('rejects %s with DSL_PARSE_ERROR and the line number', (_name, dsl, message) => {
    const error = parseError(dsl);
    expect(error.code).toBe('DSL_PARSE_ERROR');
    expect(error.message).toContain(message);
  });

  it('reports a relation defined twice as a validation error with its line', () => {
    const error = parseError('type user\ntype doc\n  relations\n    define a: [user]\n    define a: [user]');
    expect(error.code).toBe('DSL_VALIDATION_ERROR');
    expect(error.message).toBe("line 5: relation 'a' is defined twice in type 'doc'");
  });

  it.each([
    ['a condition block', 'model\n  schema 1.1\ntype user\ncondition in_range(x: int) {\n  x < 10\n}'],
    ['a conditional type restriction', 'type user\ntype doc\n  relations\n    define a: [user with in_range]'],
    ['a module header', 'module documents\ntype doc'],
    ['an extended type', 'model\n  schema 1.1\nextend type user'],
    ['schema 1.0', 'model\n  schema 1.0\ntype user'],
    ['schema 1.2', 'model\n  schema 1.2\ntype user'],
  ])('rejects %s as DSL_UNSUPPORTED', (_name, dsl) => {
    const error = parseError(dsl);
    expect(error).toBeInstanceOf(DslUnsupportedError);
    expect(error.code).toBe('DSL_UNSUPPORTED');
  });

  it('parses a 10,000-line model in one pass', () => {
    const lines = ['model', '  schema 1.1', 'type user'];
    for (let index = 0; lines.length < 10_000; index += 1) {
      lines.push(`type t${index}`, '  relations', `    define owner: [user]`, `    define viewer: [user, t${index}#owner] or owner`);
    }
    const schema = parseDsl(lines.join('\n'));
    expect(schema.typeDefinitions).toHaveLength(1 + (lines.length - 3) / 4);
  });

  it('accepts 50 nested parentheses and rejects deeper nesting without exhausting the stack', () => {
    const nested = (depth: number) =>
      `type doc\n  relations\n    define a: [doc]\n    define b: ${'('.repeat(depth)}a${')'.repeat(depth)}`;
    expect(parseDsl(nested(50)).typeDefinitions[0]?.relations.b).toEqual({ type: 'computedUserset', relation: 'a' });
    for (const depth of [51, 100_000]) {
      const error = parseError(nested(depth));
      expect(error.code).toBe('DSL_PARSE_ERROR');
      expect(error.message).toContain('line 4: parentheses nest deeper than 50 levels');
    }
  });

  it('parses a very long union on one line', () => {
    const operands = Array.from({ length: 20_000 }, () => 'a').join(' or ');
    const schema = parseDsl(`type doc\n  relations\n    define a: [doc]\n    define b: ${operands}`);
    const rewrite = schema.typeDefinitions[0]?.relations.b;
    expect(rewrite?.type === 'union' && rewrite.children.length).toBe(20_000);
  });
});

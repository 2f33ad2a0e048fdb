import { FgaError } from '../errors.ts';
import type { AuthorizationSchema, RelationMetadata, RewriteNode, TypeDefinition } from '../schema.ts';
import { parseRelationExpression } from './expression.ts';
import { tokenize } from './lexer.ts';
import { TokenCursor } from './token-cursor.ts';

export const SUPPORTED_SCHEMA_VERSION = '1.1';

/**
 * Parses an OpenFGA schema 1.1 model:
 *
 *     model
 *       schema 1.1
 *     type user
 *     type document
 *       relations
 *         define viewer: [user, group#member] or editor or viewer from parent
 *
 * The header is optional. Errors are DSL_PARSE_ERROR with the line number; conditions, modules
 * and other schema versions are DSL_UNSUPPORTED. The result is only syntactically sound: the
 * type system validates references, type restrictions and cycles.
 */
export function parseDsl(text: string): AuthorizationSchema {
  return new ModelParser(new TokenCursor(tokenize(text))).parse();
}

class ModelParser {
  constructor(private readonly cursor: TokenCursor) {}

  parse(): AuthorizationSchema {
    this.cursor.skipNewlines();
    this.header();
    const typeDefinitions: TypeDefinition[] = [];
    for (;;) {
      this.cursor.skipNewlines();
      if (this.cursor.atEnd()) break;
      if (this.cursor.atWord('type')) typeDefinitions.push(this.typeDefinition());
      else if (this.cursor.atWord('condition')) this.cursor.unsupported('conditions');
      else if (this.cursor.atWord('extend') || this.cursor.atWord('module')) this.cursor.unsupported('modules');
      else if (this.cursor.atWord('define')) this.cursor.fail("'define' must follow a 'relations' line");
      else this.cursor.fail("expected 'type'");
    }
    return { schemaVersion: SUPPORTED_SCHEMA_VERSION, typeDefinitions };
  }

  private header(): void {
    if (this.cursor.atWord('module')) this.cursor.unsupported('modules');
    if (!this.cursor.atWord('model')) return;
    this.cursor.next();
    this.cursor.expectEndOfLine("after 'model'");
    this.cursor.skipNewlines();
    if (!this.cursor.atWord('schema')) this.cursor.fail("expected 'schema 1.1' after 'model'");
    this.cursor.next();
    const version = this.cursor.peek();
    if (version.kind !== 'word' || !/^\d+\.\d+$/.test(version.text)) this.cursor.fail('expected a schema version');
    if (version.text !== SUPPORTED_SCHEMA_VERSION) {
      this.cursor.unsupported(`schema versions other than ${SUPPORTED_SCHEMA_VERSION}`);
    }
    this.cursor.next();
    this.cursor.expectEndOfLine('after the schema version');
  }

  private typeDefinition(): TypeDefinition {
    this.cursor.next();
    const type = this.cursor.expectName('a type name');
    this.cursor.expectEndOfLine('after the type name');
    const relations: Record<string, RewriteNode> = {};
    const metadata: Record<string, RelationMetadata> = {};
    this.cursor.skipNewlines();
    if (this.cursor.atWord('relations')) {
      this.cursor.next();
      this.cursor.expectEndOfLine("after 'relations'");
      this.cursor.skipNewlines();
      if (!this.cursor.atWord('define')) this.cursor.fail("expected 'define' after 'relations'");
      while (this.cursor.atWord('define')) {
        this.relationDefinition(type, relations, metadata);
        this.cursor.skipNewlines();
      }
    }
    return { type, relations, metadata: { relations: metadata } };
  }

  private relationDefinition(
    type: string,
    relations: Record<string, RewriteNode>,
    metadata: Record<string, RelationMetadata>,
  ): void {
    const line = this.cursor.next().line;
    const name = this.cursor.expectName('a relation name');
    this.cursor.expectSymbol(':', 'after relation name');
    const parsed = parseRelationExpression(this.cursor);
    this.cursor.expectEndOfLine('after the relation definition');
    if (Object.hasOwn(relations, name)) {
      throw new FgaError('DSL_VALIDATION_ERROR', `line ${line}: relation '${name}' is defined twice in type '${type}'`);
    }
    relations[name] = parsed.rewrite;
    metadata[name] = { directlyRelatedUserTypes: parsed.directlyRelatedUserTypes };
  }
}

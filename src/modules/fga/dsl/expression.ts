import type { RelationReference, RewriteNode } from '../schema.ts';
import type { TokenCursor } from './token-cursor.ts';

/** Parentheses deeper than this are refused, so hostile input cannot exhaust the stack. */
const MAX_NESTING_DEPTH = 50;

export interface ParsedRelation {
  rewrite: RewriteNode;
  directlyRelatedUserTypes: RelationReference[];
}

type Operator = 'or' | 'and' | 'but not';

/**
 * Parses the expression after `define <relation>:` following OpenFGA's grammar: operands are a
 * direct assignment `[...]`, a relation (`editor`), a tuple-to-userset (`viewer from parent`) or
 * a parenthesised expression; one level joins operands with a single kind of operator (`a or b
 * or c`, `a and b`, `a but not b`), mixing needs parentheses. The direct assignment may only be
 * the leftmost operand, so a relation has at most one.
 */
export function parseRelationExpression(cursor: TokenCursor): ParsedRelation {
  const parser = new ExpressionParser(cursor);
  const rewrite = parser.expression(true, 0);
  return { rewrite, directlyRelatedUserTypes: parser.directTypes };
}

class ExpressionParser {
  directTypes: RelationReference[] = [];

  constructor(private readonly cursor: TokenCursor) {}

  expression(allowDirect: boolean, depth: number): RewriteNode {
    const first = this.operand(allowDirect, depth);
    const operator = this.operatorAhead();
    if (operator === undefined) return first;
    if (operator === 'but not') {
      this.consumeOperator(operator);
      const subtract = this.operand(false, depth);
      if (this.operatorAhead() !== undefined) this.cursor.fail("'but not' takes one operand; use parentheses");
      return { type: 'exclusion', base: first, subtract };
    }
    const children = [first];
    while (this.operatorAhead() === operator) {
      this.consumeOperator(operator);
      children.push(this.operand(false, depth));
    }
    const other = this.operatorAhead();
    if (other !== undefined) this.cursor.fail(`cannot mix '${operator}' and '${other}' without parentheses`);
    return { type: operator === 'or' ? 'union' : 'intersection', children };
  }

  private operand(allowDirect: boolean, depth: number): RewriteNode {
    if (this.cursor.atSymbol('[')) {
      if (!allowDirect) this.cursor.fail('direct type restrictions [...] must come first in a relation definition');
      this.directAssignment();
      return { type: 'this' };
    }
    if (this.cursor.atSymbol('(')) {
      if (depth >= MAX_NESTING_DEPTH) this.cursor.fail(`parentheses nest deeper than ${MAX_NESTING_DEPTH} levels`);
      this.cursor.next();
      const inner = this.expression(allowDirect, depth + 1);
      this.cursor.expectSymbol(')', 'to close the parenthesis');
      return inner;
    }
    const relation = this.cursor.expectName('a relation name, [type restrictions] or (');
    if (!this.cursor.atWord('from')) return { type: 'computedUserset', relation };
    this.cursor.next();
    const tupleset = this.cursor.expectName("a relation name after 'from'");
    return { type: 'tupleToUserset', tupleset, computedUserset: relation };
  }

  private operatorAhead(): Operator | undefined {
    if (this.cursor.atWord('or')) return 'or';
    if (this.cursor.atWord('and')) return 'and';
    if (!this.cursor.atWord('but')) return undefined;
    const following = this.cursor.peek(1);
    if (following.kind !== 'word' || following.text !== 'not') {
      this.cursor.next();
      this.cursor.fail("expected 'not' after 'but'");
    }
    return 'but not';
  }

  private consumeOperator(operator: Operator): void {
    this.cursor.next();
    if (operator === 'but not') this.cursor.next();
  }

  /** `[user, user:*, group#member]`; the list may span lines. */
  private directAssignment(): void {
    this.cursor.next();
    for (;;) {
      this.cursor.skipNewlines();
      this.directTypes.push(this.typeRestriction());
      this.cursor.skipNewlines();
      if (this.cursor.atSymbol(']')) break;
      this.cursor.expectSymbol(',', "or ']' between type restrictions");
    }
    this.cursor.next();
  }

  private typeRestriction(): RelationReference {
    const type = this.cursor.expectName('a type name');
    let reference: RelationReference = { type };
    if (this.cursor.atSymbol(':')) {
      this.cursor.next();
      this.cursor.expectSymbol('*', `after '${type}:' (only the wildcard ${type}:* is allowed)`);
      reference = { type, wildcard: true };
    } else if (this.cursor.atSymbol('#')) {
      this.cursor.next();
      reference = { type, relation: this.cursor.expectName(`a relation name after '${type}#'`) };
    }
    if (this.cursor.atWord('with')) this.cursor.unsupported("conditions ('with <condition>')");
    return reference;
  }
}

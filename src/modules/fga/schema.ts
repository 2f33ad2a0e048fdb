/**
 * The parsed form of an authorization model (the spec's `schema` object). It is plain JSON so it
 * can be stored beside the DSL and validated again by the type system when loaded.
 */

/** How a relation's users are computed from tuples and from other relations. */
export type RewriteNode =
  /** Users written directly as tuples on this object#relation (the DSL's `[...]`). */
  | { type: 'this' }
  /** Users of another relation of the same object (`define viewer: editor`). */
  | { type: 'computedUserset'; relation: string }
  /** Users of `computedUserset` on every object related through `tupleset` (`viewer from parent`). */
  | { type: 'tupleToUserset'; tupleset: string; computedUserset: string }
  | { type: 'union'; children: RewriteNode[] }
  | { type: 'intersection'; children: RewriteNode[] }
  | { type: 'exclusion'; base: RewriteNode; subtract: RewriteNode };

export type RewriteNodeType = RewriteNode['type'];

/** A type restriction of a direct relation: `user`, `user:*` (wildcard) or `group#member` (userset). */
export interface RelationReference {
  type: string;
  relation?: string;
  wildcard?: true;
}

export interface RelationMetadata {
  directlyRelatedUserTypes: RelationReference[];
}

export interface TypeDefinition {
  type: string;
  relations: Record<string, RewriteNode>;
  metadata: { relations: Record<string, RelationMetadata> };
}

export interface AuthorizationSchema {
  schemaVersion: '1.1';
  typeDefinitions: TypeDefinition[];
}

/** The operands of a set operation (none for the leaves). */
export function rewriteChildren(node: RewriteNode): RewriteNode[] {
  if (node.type === 'union' || node.type === 'intersection') return node.children;
  return node.type === 'exclusion' ? [node.base, node.subtract] : [];
}

/** Type and relation names: identifiers, so the text forms `type:id#relation` stay unambiguous. */
export const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export function relationReferenceToString(reference: RelationReference): string {
  if (reference.wildcard) return `${reference.type}:*`;
  return reference.relation === undefined ? reference.type : `${reference.type}#${reference.relation}`;
}

import type { RewriteNode, RewriteNodeType } from '../schema.ts';
import { rewriteChildren } from '../schema.ts';
import { WILDCARD_ID } from '../tuple.ts';
import type { RelationDefinition, TypeSystem } from '../typesystem.ts';
import type { TupleReader } from './tuple-reader.ts';

/** One level of a relation's rewrite, with the users found where tuples are read. */
export interface ExpandNode {
  type: RewriteNodeType;
  /**
   * this and set operations: the relation expanded; computedUserset: the relation to expand next;
   * tupleToUserset: the tupleset relation read.
   */
  relation?: string;
  object?: string;
  /**
   * this: the subjects written directly (`user:anne`, `user:*`, `group:eng#member`);
   * tupleToUserset: the usersets to expand next (`folder:x#viewer`).
   */
  users?: string[];
  children?: ExpandNode[];
}

/**
 * Expands object#relation one rewrite level deep, like OpenFGA's Expand: usersets found are
 * returned as text for the caller to expand in turn, so the answer stays bounded.
 * Tuples that the model's type restrictions no longer allow are left out.
 */
export async function expandRelation(
  typesystem: TypeSystem,
  reader: TupleReader,
  definition: RelationDefinition,
  objectId: string,
): Promise<ExpandNode> {
  const object = `${definition.objectType}:${objectId}`;
  const expandNode = async (rewrite: RewriteNode): Promise<ExpandNode> => {
    switch (rewrite.type) {
      case 'this': {
        const users = await directUsers(reader, definition, objectId);
        return { type: 'this', relation: definition.name, object, users };
      }
      case 'computedUserset':
        return { type: 'computedUserset', relation: rewrite.relation, object };
      case 'tupleToUserset': {
        const users = await tuplesetUsersets(typesystem, reader, definition, rewrite, objectId);
        return { type: 'tupleToUserset', relation: rewrite.tupleset, object, users };
      }
      default: {
        const children = await mapInOrder(rewriteChildren(rewrite), expandNode);
        return { type: rewrite.type, relation: definition.name, object, children };
      }
    }
  };
  return expandNode(definition.rewrite);
}

async function directUsers(reader: TupleReader, definition: RelationDefinition, objectId: string): Promise<string[]> {
  const { objectType, name: relation } = definition;
  const users: string[] = [];
  // Plain ids and the wildcard share one lookup per type; keep each only if its kind is allowed.
  for (const type of new Set([...definition.directTypes, ...definition.wildcardTypes])) {
    const plainAllowed = definition.directTypes.includes(type);
    const wildcardAllowed = definition.wildcardTypes.includes(type);
    for (const id of await reader.readSubjectIds({ objectType, objectId, relation, subjectType: type })) {
      if (id === WILDCARD_ID ? wildcardAllowed : plainAllowed) users.push(`${type}:${id}`);
    }
  }
  for (const userset of definition.usersetTypes) {
    const query = { objectType, objectId, relation, subjectType: userset.type, subjectRelation: userset.relation };
    for (const id of await reader.readSubjectIds(query)) users.push(`${userset.type}:${id}#${userset.relation}`);
  }
  return [...new Set(users)].sort();
}

async function tuplesetUsersets(
  typesystem: TypeSystem,
  reader: TupleReader,
  definition: RelationDefinition,
  rewrite: Extract<RewriteNode, { type: 'tupleToUserset' }>,
  objectId: string,
): Promise<string[]> {
  const usersets: string[] = [];
  for (const parentType of typesystem.relation(definition.objectType, rewrite.tupleset)?.directTypes ?? []) {
    if (!typesystem.relation(parentType, rewrite.computedUserset)) continue;
    const query = { objectType: definition.objectType, objectId, relation: rewrite.tupleset, subjectType: parentType };
    for (const parentId of await reader.readSubjectIds(query)) {
      if (parentId !== WILDCARD_ID) usersets.push(`${parentType}:${parentId}#${rewrite.computedUserset}`);
    }
  }
  return [...new Set(usersets)].sort();
}

async function mapInOrder<T, R>(items: readonly T[], map: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (const item of items) results.push(await map(item));
  return results;
}

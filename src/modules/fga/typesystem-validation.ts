import { FgaError } from './errors.ts';
import type { RewriteNode } from './schema.ts';
import { relationReferenceToString, rewriteChildren } from './schema.ts';
import type { RelationDefinition, TypeSystem } from './typesystem.ts';

/** Rewrites from stored JSON could nest arbitrarily; the DSL parser already caps parentheses at 50. */
const MAX_REWRITE_DEPTH = 64;

export function invalid(message: string): never {
  throw new FgaError('DSL_VALIDATION_ERROR', message);
}

/**
 * OpenFGA's model rules (pkg/typesystem NewAndValidate), checked for every relation:
 * references resolve, tuplesets are direct-only, type restrictions are sound, every relation
 * can be reached from some directly assignable type (an "entrypoint"), and computed usersets
 * do not define each other in a loop.
 */
export function validateRelations(typesystem: TypeSystem): void {
  const relations = typesystem.allRelations();
  for (const relation of relations) {
    validateRewrite(typesystem, relation, relation.rewrite, 0);
    validateTypeRestrictions(typesystem, relation);
  }
  const withEntrypoint = relationsWithEntrypoint(typesystem, relations);
  const unreachable = relations.find((relation) => !withEntrypoint.has(relation));
  if (unreachable) {
    invalid(
      `relation '${label(unreachable)}' has no entrypoint: no path leads from it to a directly assignable type ` +
        '(it only refers to itself or to relations without one)',
    );
  }
  for (const type of typesystem.types()) rejectComputedCycles(typesystem, type);
}

function label(relation: RelationDefinition): string {
  return `${relation.objectType}#${relation.name}`;
}

function validateRewrite(typesystem: TypeSystem, relation: RelationDefinition, node: RewriteNode, depth: number): void {
  if (depth > MAX_REWRITE_DEPTH) invalid(`relation '${label(relation)}' nests deeper than ${MAX_REWRITE_DEPTH} levels`);
  switch (node.type) {
    case 'this':
      return;
    case 'computedUserset':
      if (!typesystem.relation(relation.objectType, node.relation)) {
        invalid(`relation '${label(relation)}' refers to undefined relation '${relation.objectType}#${node.relation}'`);
      }
      return;
    case 'tupleToUserset': {
      const tupleset = typesystem.relation(relation.objectType, node.tupleset);
      if (!tupleset) {
        invalid(
          `relation '${label(relation)}' reads undefined tupleset relation '${relation.objectType}#${node.tupleset}'`,
        );
      }
      if (tupleset.rewrite.type !== 'this') {
        invalid(
          `relation '${label(tupleset)}' is used as a tupleset ('from ${tupleset.name}') ` +
            'and must be a direct relation only',
        );
      }
      if (!tupleset.directTypes.some((type) => typesystem.relation(type, node.computedUserset))) {
        invalid(
          `relation '${label(relation)}': '${node.computedUserset}' is not a relation of any type ` +
            `allowed on '${label(tupleset)}'`,
        );
      }
      return;
    }
    case 'union':
    case 'intersection':
      if (!Array.isArray(node.children) || node.children.length === 0) {
        invalid(`relation '${label(relation)}' has an empty ${node.type}`);
      }
      for (const child of node.children) validateRewrite(typesystem, relation, child, depth + 1);
      return;
    case 'exclusion':
      validateRewrite(typesystem, relation, node.base, depth + 1);
      validateRewrite(typesystem, relation, node.subtract, depth + 1);
      return;
    default:
      invalid(`relation '${label(relation)}' has an unknown rewrite '${(node as { type: unknown }).type}'`);
  }
}

function containsThis(node: RewriteNode): boolean {
  return node.type === 'this' || rewriteChildren(node).some(containsThis);
}

function validateTypeRestrictions(typesystem: TypeSystem, relation: RelationDefinition): void {
  const restrictions = relation.directlyRelatedUserTypes;
  const assignable = containsThis(relation.rewrite);
  if (assignable && restrictions.length === 0) {
    invalid(`relation '${label(relation)}' is directly assignable but allows no type`);
  }
  if (!assignable && restrictions.length > 0) {
    invalid(`relation '${label(relation)}' is not directly assignable but lists types`);
  }
  const seen = new Set<string>();
  for (const restriction of restrictions) {
    const text = relationReferenceToString(restriction);
    if (seen.has(text)) invalid(`relation '${label(relation)}' lists type '${text}' twice`);
    seen.add(text);
    if (!typesystem.hasType(restriction.type)) {
      invalid(`relation '${label(relation)}' allows undefined type '${restriction.type}'`);
    }
    if (restriction.wildcard && restriction.relation !== undefined) {
      invalid(`relation '${label(relation)}' has an invalid type '${text}'`);
    }
    if (restriction.relation !== undefined && !typesystem.relation(restriction.type, restriction.relation)) {
      invalid(`relation '${label(relation)}' allows undefined userset '${text}'`);
    }
    if (relation.isTupleset && (restriction.wildcard || restriction.relation !== undefined)) {
      invalid(`relation '${label(relation)}' is used as a tupleset and may only allow plain types, not '${text}'`);
    }
  }
}

/**
 * Relations with at least one finite path to a directly assignable type, as a least fixpoint:
 * a relation is re-evaluated only when one it depends on gains an entrypoint, so the work stays
 * linear in the model size. Intersections need every child, exclusions base and subtract (as
 * OpenFGA requires).
 */
function relationsWithEntrypoint(typesystem: TypeSystem, relations: RelationDefinition[]): Set<RelationDefinition> {
  const reachable = new Set<RelationDefinition>();
  const dependents = new Map<RelationDefinition, RelationDefinition[]>();
  for (const relation of relations) {
    for (const dependency of dependenciesOf(typesystem, relation, relation.rewrite)) {
      const list = dependents.get(dependency);
      if (list) list.push(relation);
      else dependents.set(dependency, [relation]);
    }
  }
  const has = (type: string, name: string): boolean => {
    const target = typesystem.relation(type, name);
    return target !== undefined && reachable.has(target);
  };
  const evaluate = (relation: RelationDefinition, node: RewriteNode): boolean => {
    switch (node.type) {
      case 'this':
        return relation.directTypes.length > 0 || relation.wildcardTypes.length > 0 ||
          relation.usersetTypes.some((userset) => has(userset.type, userset.relation));
      case 'computedUserset':
        return has(relation.objectType, node.relation);
      case 'tupleToUserset': {
        const parentTypes = typesystem.relation(relation.objectType, node.tupleset)?.directTypes ?? [];
        return parentTypes.some((type) => has(type, node.computedUserset));
      }
      case 'union':
        return node.children.some((child) => evaluate(relation, child));
      case 'intersection':
        return node.children.every((child) => evaluate(relation, child));
      case 'exclusion':
        return evaluate(relation, node.base) && evaluate(relation, node.subtract);
    }
  };
  const pending = [...relations];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (reachable.has(next) || !evaluate(next, next.rewrite)) continue;
    reachable.add(next);
    pending.push(...(dependents.get(next) ?? []));
  }
  return reachable;
}

/** The relations whose entrypoints decide this rewrite's. */
function dependenciesOf(typesystem: TypeSystem, relation: RelationDefinition, node: RewriteNode): RelationDefinition[] {
  const resolve = (type: string, name: string): RelationDefinition[] => {
    const target = typesystem.relation(type, name);
    return target ? [target] : [];
  };
  switch (node.type) {
    case 'this':
      return relation.usersetTypes.flatMap((userset) => resolve(userset.type, userset.relation));
    case 'computedUserset':
      return resolve(relation.objectType, node.relation);
    case 'tupleToUserset':
      return (typesystem.relation(relation.objectType, node.tupleset)?.directTypes ?? []).flatMap((type) =>
        resolve(type, node.computedUserset),
      );
    default:
      return rewriteChildren(node).flatMap((child) => dependenciesOf(typesystem, relation, child));
  }
}

/** Computed usersets of one type that refer to each other in a loop (`a: b`, `b: a or [user]`): invalid in OpenFGA. */
function rejectComputedCycles(typesystem: TypeSystem, type: string): void {
  const edges = new Map<string, string[]>();
  for (const relation of typesystem.relationsOf(type)) edges.set(relation.name, computedReferences(relation.rewrite));
  const state = new Map<string, 'active' | 'done'>();
  for (const start of edges.keys()) {
    if (state.has(start)) continue;
    // Iterative depth-first search: a long chain of relations must not overflow the stack.
    const path: { name: string; next: number }[] = [{ name: start, next: 0 }];
    state.set(start, 'active');
    while (path.length > 0) {
      const frame = path[path.length - 1] as { name: string; next: number };
      const target = edges.get(frame.name)?.[frame.next];
      frame.next += 1;
      if (target === undefined) {
        state.set(frame.name, 'done');
        path.pop();
      } else if (state.get(target) === 'active') {
        const loop = path.slice(path.findIndex((entry) => entry.name === target)).map((entry) => entry.name);
        invalid(`relations of type '${type}' define each other in a cycle: ${[...loop, target].join(' -> ')}`);
      } else if (!state.has(target)) {
        state.set(target, 'active');
        path.push({ name: target, next: 0 });
      }
    }
  }
}

function computedReferences(node: RewriteNode): string[] {
  return node.type === 'computedUserset' ? [node.relation] : rewriteChildren(node).flatMap(computedReferences);
}

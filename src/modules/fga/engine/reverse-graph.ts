import type { RewriteNode } from '../schema.ts';
import type { RelationDefinition, TypeSystem } from '../typesystem.ts';

/**
 * How knowing "the subject has relation R on object O" (a fact) yields facts about other objects,
 * read off the model backwards. `definite` edges come from union positions only; edges through an
 * intersection or an exclusion's base yield candidates that list-objects must confirm with a check.
 * An exclusion's subtract and an intersection's other operands yield nothing: they only remove.
 */
export type ReverseEdge =
  /** Same object, another relation (`define viewer: editor`). */
  | { kind: 'computed'; relation: string; definite: boolean }
  /** Objects whose direct tuples name the fact's userset (`document:?#viewer@group:eng#member`). */
  | { kind: 'userset'; objectType: string; relation: string; definite: boolean }
  /** Objects whose tupleset names the fact's object (`document:?#parent@folder:x` for `viewer from parent`). */
  | { kind: 'tupleToUserset'; objectType: string; relation: string; tupleset: string; definite: boolean };

/** A relation whose direct tuples may name a plain subject (or its type's wildcard). */
export interface DirectEdge {
  objectType: string;
  relation: string;
  definite: boolean;
}

type Mode = 'definite' | 'candidate' | 'none';

export function relationKey(type: string, relation: string): string {
  return `${type}#${relation}`;
}

/** Built once per model and cached; list-objects walks it from the subject towards the target. */
export class ReverseGraph {
  private static readonly cache = new WeakMap<TypeSystem, ReverseGraph>();

  private readonly edges = new Map<string, ReverseEdge[]>();
  private readonly plainEdges = new Map<string, DirectEdge[]>();
  private readonly wildcardEdges = new Map<string, DirectEdge[]>();
  /** target relation key -> relation keys whose facts feed it */
  private readonly feeders = new Map<string, Set<string>>();
  private readonly relevance = new Map<string, ReadonlySet<string>>();

  static of(typesystem: TypeSystem): ReverseGraph {
    let graph = ReverseGraph.cache.get(typesystem);
    if (!graph) {
      graph = new ReverseGraph(typesystem);
      ReverseGraph.cache.set(typesystem, graph);
    }
    return graph;
  }

  private constructor(private readonly typesystem: TypeSystem) {
    for (const relation of typesystem.allRelations()) this.walk(relation, relation.rewrite, 'definite');
  }

  edgesFrom(type: string, relation: string): readonly ReverseEdge[] {
    return this.edges.get(relationKey(type, relation)) ?? [];
  }

  /** Relations whose direct tuples may name a plain subject of this type (`wildcard`: its `type:*`). */
  directEdges(subjectType: string, wildcard: boolean): readonly DirectEdge[] {
    return (wildcard ? this.wildcardEdges : this.plainEdges).get(subjectType) ?? [];
  }

  /** Relation keys from which facts can lead to the target (the target included): the rest is pruned. */
  relevantTo(type: string, relation: string): ReadonlySet<string> {
    const target = relationKey(type, relation);
    let relevant = this.relevance.get(target);
    if (!relevant) {
      const found = new Set([target]);
      const pending = [target];
      for (let key = pending.pop(); key !== undefined; key = pending.pop()) {
        for (const feeder of this.feeders.get(key) ?? []) {
          if (!found.has(feeder)) {
            found.add(feeder);
            pending.push(feeder);
          }
        }
      }
      relevant = found;
      this.relevance.set(target, relevant);
    }
    return relevant;
  }

  private walk(relation: RelationDefinition, node: RewriteNode, mode: Mode): void {
    if (mode === 'none') return;
    const definite = mode === 'definite';
    const { objectType, name } = relation;
    const target = relationKey(objectType, name);
    switch (node.type) {
      case 'this':
        for (const type of relation.directTypes) push(this.plainEdges, type, { objectType, relation: name, definite });
        for (const type of relation.wildcardTypes) {
          push(this.wildcardEdges, type, { objectType, relation: name, definite });
        }
        for (const userset of relation.usersetTypes) {
          const edge: ReverseEdge = { kind: 'userset', objectType, relation: name, definite };
          this.addEdge(relationKey(userset.type, userset.relation), target, edge);
        }
        return;
      case 'computedUserset':
        this.addEdge(relationKey(objectType, node.relation), target, { kind: 'computed', relation: name, definite });
        return;
      case 'tupleToUserset':
        for (const parentType of this.typesystem.relation(objectType, node.tupleset)?.directTypes ?? []) {
          if (!this.typesystem.relation(parentType, node.computedUserset)) continue;
          this.addEdge(relationKey(parentType, node.computedUserset), target, {
            kind: 'tupleToUserset',
            objectType,
            relation: name,
            tupleset: node.tupleset,
            definite,
          });
        }
        return;
      case 'union':
        for (const child of node.children) this.walk(relation, child, mode);
        return;
      case 'intersection':
        // Every member of the intersection is a member of its first operand: candidates from it suffice.
        node.children.forEach((child, index) => this.walk(relation, child, index === 0 ? 'candidate' : 'none'));
        return;
      case 'exclusion':
        this.walk(relation, node.base, 'candidate');
        return;
    }
  }

  private addEdge(source: string, target: string, edge: ReverseEdge): void {
    push(this.edges, source, edge);
    let feeders = this.feeders.get(target);
    if (!feeders) {
      feeders = new Set();
      this.feeders.set(target, feeders);
    }
    feeders.add(source);
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

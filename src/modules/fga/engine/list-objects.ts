import { FgaError } from '../errors.ts';
import type { Subject } from '../tuple.ts';
import { WILDCARD_ID } from '../tuple.ts';
import type { TypeSystem } from '../typesystem.ts';
import type { CheckOptions } from './check.ts';
import { CheckResolver } from './check.ts';
import { isPromise } from './maybe-async.ts';
import { Outcome } from './outcome.ts';
import type { ReverseEdge } from './reverse-graph.ts';
import { ReverseGraph, relationKey } from './reverse-graph.ts';
import type { ObjectIdsQuery, TupleReader } from './tuple-reader.ts';

/** "The subject has `relation` on `type:id`", proven (`definite`) or still to be confirmed by a check. */
interface Fact {
  type: string;
  id: string;
  relation: string;
  definite: boolean;
}

interface Known extends Fact {
  /** Dispatches between this object and the subject on the shortest path of its kind (definite or candidate). */
  depth: number;
}

/**
 * Ids of every object of `objectType` on which the subject has `relation`, sorted.
 *
 * Reverse expansion (as OpenFGA's list-objects): start from the tuples that name the subject,
 * follow the model backwards through the reverse index level by level (each level is one
 * dispatch, so a breadth-first walk finds every object at its smallest depth), and keep the facts
 * about the target relation. Facts that passed through an intersection or exclusion are only
 * candidates, confirmed by a check sharing one memo. Each fact is expanded once, cycles included.
 */
export async function listObjects(
  typesystem: TypeSystem,
  reader: TupleReader,
  objectType: string,
  relation: string,
  subject: Subject,
  options: CheckOptions,
): Promise<string[]> {
  const graph = ReverseGraph.of(typesystem);
  const relevant = graph.relevantTo(objectType, relation);
  // Facts by relation (type#relation), then by object id: the walk builds no key per object, and
  // each fact is one object (a large answer allocates little more than its own ids).
  const known = new Map<string, Map<string, Known>>();
  let level: Known[] = [];
  let depth = 0;

  /** The facts of `type#relation` learnt so far, or undefined when that relation cannot lead to the target. */
  const factsOf = (type: string, factRelation: string): Map<string, Known> | undefined => {
    const key = relationKey(type, factRelation);
    if (!relevant.has(key)) return undefined;
    let facts = known.get(key);
    if (!facts) known.set(key, (facts = new Map()));
    return facts;
  };
  const learn = (facts: Map<string, Known> | undefined, type: string, id: string, factRelation: string, definite: boolean, into: Known[], factDepth: number): void => {
    if (!facts) return;
    const previous = facts.get(id);
    // Expand each fact once, and once more if a candidate turns out definite; the walk goes level
    // by level, so the first depth recorded is the smallest.
    if (previous && (previous.definite || !definite)) return;
    const fact = { type, id, relation: factRelation, definite, depth: factDepth };
    facts.set(id, fact);
    into.push(fact);
  };

  for (const seed of await seedFacts(graph, reader, subject)) learn(factsOf(seed.type, seed.relation), seed.type, seed.id, seed.relation, seed.definite, level, 0);
  while (level.length > 0) {
    const next: Known[] = [];
    // `level` grows while it is walked: computed usersets stay on the same object, at the same depth.
    for (let index = 0; index < level.length; index += 1) {
      const fact = level[index] as Known;
      for (const edge of graph.edgesFrom(fact.type, fact.relation)) {
        const definite = fact.definite && edge.definite;
        if (edge.kind === 'computed') {
          learn(factsOf(fact.type, edge.relation), fact.type, fact.id, edge.relation, definite, level, depth);
          continue;
        }
        const facts = factsOf(edge.objectType, edge.relation);
        if (!facts) continue;
        const ids = reader.readObjectIds(reverseQuery(fact, edge));
        // Awaiting only real promises keeps the in-memory walk free of microtask hops.
        for (const id of isPromise(ids) ? await ids : ids) learn(facts, edge.objectType, id, edge.relation, definite, next, depth + 1);
      }
    }
    level = next;
    depth += 1;
  }

  const checker = new CheckResolver(typesystem, reader, subject, options);
  const ids: string[] = [];
  for (const fact of known.get(relationKey(objectType, relation))?.values() ?? []) {
    if (fact.definite && fact.depth >= options.maxDepth) {
      // Every path is that long, so a check of this object would fail the same way.
      throw new FgaError(
        'MAX_DEPTH_EXCEEDED',
        `resolution exceeded the maximum depth of ${options.maxDepth} at ${objectType}:${fact.id}`,
      );
    }
    if (fact.definite) {
      ids.push(fact.id);
      continue;
    }
    const outcome = checker.resolve(objectType, fact.id, relation, 0);
    if ((isPromise(outcome) ? await outcome : outcome) === Outcome.allowed) ids.push(fact.id);
  }
  return ids.sort();
}

/** Facts read straight from tuples naming the subject (or its type's wildcard); a userset subject is a fact itself. */
async function seedFacts(graph: ReverseGraph, reader: TupleReader, subject: Subject): Promise<Fact[]> {
  if (subject.relation !== undefined) {
    return [{ type: subject.type, id: subject.id, relation: subject.relation, definite: true }];
  }
  const seeds: Fact[] = [];
  const lookups = [{ subjectId: WILDCARD_ID, edges: graph.directEdges(subject.type, true) }];
  if (subject.id !== WILDCARD_ID) {
    lookups.push({ subjectId: subject.id, edges: graph.directEdges(subject.type, false) });
  }
  for (const { subjectId, edges } of lookups) {
    for (const edge of edges) {
      const query = { objectType: edge.objectType, relation: edge.relation, subjectType: subject.type, subjectId };
      const ids = reader.readObjectIds(query);
      for (const id of isPromise(ids) ? await ids : ids) {
        seeds.push({ type: edge.objectType, id, relation: edge.relation, definite: edge.definite });
      }
    }
  }
  return seeds;
}

function reverseQuery(fact: Fact, edge: Exclude<ReverseEdge, { kind: 'computed' }>): ObjectIdsQuery {
  const subject = { subjectType: fact.type, subjectId: fact.id };
  return edge.kind === 'userset'
    ? { objectType: edge.objectType, relation: edge.relation, ...subject, subjectRelation: fact.relation }
    : { objectType: edge.objectType, relation: edge.tupleset, ...subject };
}

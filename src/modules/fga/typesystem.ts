import type { AuthorizationSchema, RelationReference, RewriteNode } from './schema.ts';
import { NAME_PATTERN, relationReferenceToString, rewriteChildren } from './schema.ts';
import type { Subject } from './tuple.ts';
import { WILDCARD_ID } from './tuple.ts';
import { invalid, validateRelations } from './typesystem-validation.ts';

const RESERVED_NAMES = new Set(['self', 'this']);

/** A relation of a validated model, with the lookups the engine needs precomputed. */
export class RelationDefinition {
  /** Types whose objects may be written directly (`[user]`). */
  readonly directTypes: readonly string[];
  /** Types whose wildcard may be written (`[user:*]`). */
  readonly wildcardTypes: readonly string[];
  /** Usersets that may be written as subjects (`[group#member]`). */
  readonly usersetTypes: readonly { type: string; relation: string }[];
  /** Subject kinds allowed by the type restrictions: `user`, `user:*`, `group#member`. */
  private readonly allowedKinds: ReadonlySet<string>;
  /**
   * Per `computed from tupleset` node of this relation's rewrite: the relation `computed` of each
   * type the tupleset may name directly that defines it, in the tupleset's order (a type without it
   * cannot grant it: OpenFGA skips it too). Filled by the TypeSystem once every relation exists.
   */
  readonly tuplesetTargets = new Map<RewriteNode, readonly RelationDefinition[]>();
  /** directSources' answers by subject kind. */
  private readonly sourcesByKind = new Map<string, readonly DirectSource[]>();

  constructor(
    readonly objectType: string,
    readonly name: string,
    readonly rewrite: RewriteNode,
    readonly directlyRelatedUserTypes: readonly RelationReference[],
    /** Whether some `x from <this relation>` reads this relation's tuples. */
    readonly isTupleset: boolean,
    /** Its number among the model's relations (0 to TypeSystem.relationCount - 1): a check's memo is indexed by it. */
    readonly index: number,
  ) {
    const types = directlyRelatedUserTypes;
    this.directTypes = types.filter((ref) => !ref.wildcard && ref.relation === undefined).map((ref) => ref.type);
    this.wildcardTypes = types.filter((ref) => ref.wildcard).map((ref) => ref.type);
    this.usersetTypes = types.flatMap(({ type, relation }) => (relation === undefined ? [] : [{ type, relation }]));
    this.allowedKinds = new Set(directlyRelatedUserTypes.map(relationReferenceToString));
  }

  /** Whether a tuple with this subject may be written on this relation (its type restrictions). */
  allowsSubject(subject: Subject): boolean {
    return this.allowedKinds.has(subjectKind(subject));
  }

  /**
   * What a check reads for `this` of this relation, in order, for a subject of its kind: the tuple
   * naming the subject itself (when its kind may be written here), the typed wildcard (for a plain
   * subject whose type may be written as `type:*`), then every userset type. Made once per
   * subject kind (a model has few): checks read it for every relation they touch.
   */
  directSources(subject: Subject): readonly DirectSource[] {
    const kind = subjectKind(subject);
    const known = this.sourcesByKind.get(kind);
    if (known) return known;
    const sources: DirectSource[] = [];
    if (this.allowedKinds.has(kind)) sources.push(SUBJECT_ITSELF);
    const plain = subject.relation === undefined && subject.id !== WILDCARD_ID;
    if (plain && this.wildcardTypes.includes(subject.type)) sources.push(TYPED_WILDCARD);
    sources.push(...this.usersetTypes);
    this.sourcesByKind.set(kind, sources);
    return sources;
  }
}

/** The tuple `object#relation@subject` itself. */
export const SUBJECT_ITSELF = 'subject';
/** The tuple `object#relation@type:*` of the subject's type. */
export const TYPED_WILDCARD = 'wildcard';
export type DirectSource = typeof SUBJECT_ITSELF | typeof TYPED_WILDCARD | { type: string; relation: string };

/**
 * A validated authorization model. Build it once per model version (validation walks the whole
 * model) and share it: it is immutable.
 */
export class TypeSystem {
  private readonly relationsByType: ReadonlyMap<string, ReadonlyMap<string, RelationDefinition>>;
  /** How many relations the model defines, every type together (RelationDefinition.index is below it). */
  readonly relationCount: number;

  private constructor(readonly schema: AuthorizationSchema) {
    const tuplesets = collectTuplesets(schema);
    const byType = new Map<string, Map<string, RelationDefinition>>();
    let count = 0;
    for (const definition of schema.typeDefinitions) {
      const relations = new Map<string, RelationDefinition>();
      for (const [name, rewrite] of Object.entries(definition.relations)) {
        const restrictions = definition.metadata?.relations?.[name]?.directlyRelatedUserTypes ?? [];
        const isTupleset = tuplesets.has(`${definition.type}#${name}`);
        relations.set(name, new RelationDefinition(definition.type, name, rewrite, restrictions, isTupleset, count++));
      }
      byType.set(definition.type, relations);
    }
    this.relationsByType = byType;
    this.relationCount = count;
    for (const relations of byType.values()) for (const definition of relations.values()) this.findTuplesetTargets(definition, definition.rewrite);
  }

  private findTuplesetTargets(definition: RelationDefinition, rewrite: RewriteNode): void {
    if (rewrite.type === 'tupleToUserset') {
      const parentTypes = this.relation(definition.objectType, rewrite.tupleset)?.directTypes ?? [];
      definition.tuplesetTargets.set(rewrite, parentTypes.flatMap((type) => this.relation(type, rewrite.computedUserset) ?? []));
    }
    for (const child of rewriteChildren(rewrite)) this.findTuplesetTargets(definition, child);
  }

  /** Validates the schema (DSL_VALIDATION_ERROR on the first problem) and indexes it. */
  static fromSchema(schema: AuthorizationSchema): TypeSystem {
    validateNames(schema);
    const typesystem = new TypeSystem(schema);
    validateRelations(typesystem);
    return typesystem;
  }

  types(): string[] {
    return [...this.relationsByType.keys()];
  }

  hasType(type: string): boolean {
    return this.relationsByType.has(type);
  }

  relation(type: string, name: string): RelationDefinition | undefined {
    return this.relationsByType.get(type)?.get(name);
  }

  relationsOf(type: string): Iterable<RelationDefinition> {
    return this.relationsByType.get(type)?.values() ?? [];
  }

  allRelations(): RelationDefinition[] {
    return [...this.relationsByType.values()].flatMap((relations) => [...relations.values()]);
  }
}

/** The type-restriction form of a subject (`user`, `user:*`, `group#member`), as restrictions are written. */
export function subjectKind(subject: Subject): string {
  if (subject.relation !== undefined) return `${subject.type}#${subject.relation}`;
  return subject.id === WILDCARD_ID ? `${subject.type}:*` : subject.type;
}

/** `type#relation` of every relation used as the tupleset of a tuple-to-userset. */
function collectTuplesets(schema: AuthorizationSchema): Set<string> {
  const tuplesets = new Set<string>();
  const visit = (type: string, node: RewriteNode): void => {
    if (node.type === 'tupleToUserset') tuplesets.add(`${type}#${node.tupleset}`);
    for (const child of rewriteChildren(node)) visit(type, child);
  };
  for (const definition of schema.typeDefinitions) {
    for (const rewrite of Object.values(definition.relations)) visit(definition.type, rewrite);
  }
  return tuplesets;
}

/** Checks what indexing relies on: supported version, valid and unique names. */
function validateNames(schema: AuthorizationSchema): void {
  if (schema.schemaVersion !== '1.1') invalid(`unsupported schema version '${String(schema.schemaVersion)}'`);
  const seen = new Set<string>();
  for (const definition of schema.typeDefinitions) {
    checkName(definition.type, `type name '${definition.type}'`);
    if (seen.has(definition.type)) invalid(`type '${definition.type}' is defined twice`);
    seen.add(definition.type);
    for (const relation of Object.keys(definition.relations)) {
      checkName(relation, `relation name '${definition.type}#${relation}'`);
    }
  }
}

function checkName(name: string, what: string): void {
  if (!NAME_PATTERN.test(name)) invalid(`${what} is not a valid identifier`);
  if (RESERVED_NAMES.has(name)) invalid(`${what} is reserved`);
}

import type { Permission } from '../roles/index.ts';
import { z, type ZodType } from 'zod';
import { permission } from '../../platform/http/route.ts';
import { NAME_PATTERN } from './schema.ts';
import { relationTupleFields } from './tuples/events.ts';

/** What every FGA route shares: its tag and its permission (spec, Requires). */
export const fgaGuard = (name: Permission) => ({ tags: ['FGA'], access: permission(name) });

// Tuple fields keep the text form `type:id#relation@type:id#relation` unambiguous: names are
// identifiers, ids hold no whitespace, ':' or '#'. A tuple's stream is named after that text.
const name = z.string().max(100).regex(NAME_PATTERN, 'an identifier (letters, digits, _ and -)');
const id = z.string().min(1).max(256).regex(/^[^\s:#]+$/, "no whitespace, ':' or '#'");

const tupleFields = {
  objectType: name,
  objectId: id.refine((value) => value !== '*', 'an object id cannot be the wildcard *'),
  relation: name,
  subjectType: name,
  subjectId: id.describe("'*' is the typed wildcard: every subject of subjectType"),
  subjectRelation: name.optional().describe('makes the subject a userset: every subject with this relation to subjectType:subjectId'),
};

export const tupleSchema = z.strictObject(tupleFields);

export const consistencyToken = z
  .string()
  .regex(/^\d{1,20}$/, 'a consistency token returned by a tuple write')
  .transform((token) => BigInt(token))
  .optional()
  .describe(
    'The consistencyToken of a tuple write: the answer then reflects that write (and every earlier one). ' +
      'Without it the answer reflects whatever this instance has applied, normally within milliseconds of the write.',
  );

/** What a tuple write answers with, for queries that must observe it. */
export const tokenOf = (position: bigint): string => position.toString();

// Queries take plain strings: the engine answers INVALID_TYPE / INVALID_RELATION for names the
// model does not define, as the spec lists.
const queryText = z.string().min(1).max(256);

export const queryFields = {
  objectType: queryText,
  relation: queryText,
  subjectType: queryText,
  subjectId: queryText,
  subjectRelation: queryText.optional().describe('asks for a userset (type:id#relation) instead of one subject'),
  consistencyToken,
};

export const queryObjectId = queryText;

// What the FGA routes answer.

const timestamp = z.string().describe('ISO 8601');

type RewriteNodeShape = z.infer<typeof rewriteLeaf> | { type: 'union' | 'intersection'; children: RewriteNodeShape[] } | { type: 'exclusion'; base: RewriteNodeShape; subtract: RewriteNodeShape };
const rewriteLeaf = z.union([
  z.object({ type: z.literal('this') }),
  z.object({ type: z.literal('computedUserset'), relation: z.string() }),
  z.object({ type: z.literal('tupleToUserset'), tupleset: z.string(), computedUserset: z.string() }),
]);
const rewriteNode: ZodType<RewriteNodeShape> = z.lazy(() =>
  z.union([
    rewriteLeaf,
    z.object({ type: z.enum(['union', 'intersection']), children: z.array(rewriteNode) }),
    z.object({ type: z.literal('exclusion'), base: rewriteNode, subtract: rewriteNode }),
  ]),
).meta({ id: 'FgaRewriteNode' }); // recursive: documented once, as a component
const relationReference = z.object({ type: z.string(), relation: z.string().optional(), wildcard: z.literal(true).optional() });
const authorizationSchema = z.object({
  schemaVersion: z.literal('1.1'),
  typeDefinitions: z.array(
    z.object({
      type: z.string(),
      relations: z.record(z.string(), rewriteNode),
      metadata: z.object({ relations: z.record(z.string(), z.object({ directlyRelatedUserTypes: z.array(relationReference) })) }),
    }),
  ),
});

export const modelSummarySchema = z.object({ id: z.string(), name: z.string(), version: z.number().int(), isActive: z.boolean(), createdAt: timestamp, updatedAt: timestamp });
export const modelSchema = modelSummarySchema.extend({ dsl: z.string(), schema: authorizationSchema });

const tupleOut = z.object(relationTupleFields);
export const storedTupleSchema = tupleOut.extend({ createdAt: timestamp });
export const writtenTupleSchema = tupleOut.extend({ consistencyToken: z.string() });
export const consistencyTokenOut = z.string().describe('pass to check, expand or list-objects to observe this write');

type ResolutionShape = { type: string; relation: string; object?: string | undefined; result: boolean; children?: ResolutionShape[] | undefined; tupleFound?: string | undefined; note?: string | undefined };
const resolutionNode: ZodType<ResolutionShape> = z.lazy(() =>
  z.object({
    type: z.string(),
    relation: z.string(),
    object: z.string().optional(),
    result: z.boolean(),
    children: z.array(resolutionNode).optional(),
    tupleFound: z.string().optional(),
    note: z.string().optional(),
  }),
).meta({ id: 'FgaResolutionNode' });
export const checkResultSchema = z.object({ allowed: z.boolean(), resolution: resolutionNode.optional() });

type ExpandShape = { type: string; relation?: string | undefined; object?: string | undefined; users?: string[] | undefined; children?: ExpandShape[] | undefined };
export const expandNodeSchema: ZodType<ExpandShape> = z.lazy(() =>
  z.object({
    type: z.string(),
    relation: z.string().optional(),
    object: z.string().optional(),
    users: z.array(z.string()).optional(),
    children: z.array(expandNodeSchema).optional(),
  }),
).meta({ id: 'FgaExpandNode' });
export const expandTreeSchema = z.object({ tree: expandNodeSchema });
export const listObjectsSchema = z.object({ objectIds: z.array(z.string()), total: z.number().int() });

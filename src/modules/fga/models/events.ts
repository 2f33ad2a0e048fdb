import { z } from 'zod';
import { defineEvent, type EventOf } from '../../../platform/events/define-event.ts';
import type { AuthorizationSchema, RewriteNode } from '../schema.ts';

const rewriteNode: z.ZodType<RewriteNode> = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('this') }),
    z.strictObject({ type: z.literal('computedUserset'), relation: z.string() }),
    z.strictObject({ type: z.literal('tupleToUserset'), tupleset: z.string(), computedUserset: z.string() }),
    z.strictObject({ type: z.literal('union'), children: z.array(rewriteNode) }),
    z.strictObject({ type: z.literal('intersection'), children: z.array(rewriteNode) }),
    z.strictObject({ type: z.literal('exclusion'), base: rewriteNode, subtract: rewriteNode }),
  ]),
);
const relationReference = z.strictObject({ type: z.string(), relation: z.string().optional(), wildcard: z.literal(true).optional() });
const authorizationSchema: z.ZodType<AuthorizationSchema> = z.strictObject({
  schemaVersion: z.literal('1.1'),
  typeDefinitions: z.array(
    z.strictObject({
      type: z.string(),
      relations: z.record(z.string(), rewriteNode),
      metadata: z.strictObject({ relations: z.record(z.string(), z.strictObject({ directlyRelatedUserTypes: z.array(relationReference) })) }),
    }),
  ),
});

/**
 * Events carry the DSL as written and the schema it was validated into: a replay restores exactly
 * the model tuples were checked against, even if the parser changes later.
 */
const modelContent = z.strictObject({ dsl: z.string(), schema: authorizationSchema });
export type ModelContent = z.infer<typeof modelContent>;

export const fgaModelCreated = defineEvent({
  type: 'FgaModelCreated',
  data: modelContent.extend({ modelId: z.string(), name: z.string(), version: z.number().int() }),
});
export const fgaModelUpdated = defineEvent({
  type: 'FgaModelUpdated',
  data: modelContent.partial().extend({ modelId: z.string(), name: z.string().optional() }),
});
export const fgaModelActivated = defineEvent({
  type: 'FgaModelActivated',
  description: 'previousModelId: the model that stopped being active at the same moment (null when none was).',
  data: z.strictObject({ modelId: z.string(), previousModelId: z.string().nullable() }),
});
export const fgaModelDeleted = defineEvent({ type: 'FgaModelDeleted', data: z.strictObject({ modelId: z.string() }) });

export const fgaModelEvents = [fgaModelCreated, fgaModelUpdated, fgaModelActivated, fgaModelDeleted];

export type FgaModelCreated = EventOf<typeof fgaModelCreated>;
export type FgaModelUpdated = EventOf<typeof fgaModelUpdated>;
export type FgaModelActivated = EventOf<typeof fgaModelActivated>;
export type FgaModelDeleted = EventOf<typeof fgaModelDeleted>;
export type FgaModelEvent = EventOf<(typeof fgaModelEvents)[number]>;

export const FGA_MODEL_EVENT_TYPES: ReadonlySet<string> = new Set(fgaModelEvents.map((event) => event.type));

/**
 * All models of a tenant live in one stream: the next version number and "one active model per
 * tenant" are then decided on one consistent state and appended atomically. Models change
 * rarely, so the stream stays short.
 */
export const modelsStreamId = (tenant: string): string => `fgamodels-${tenant}`;

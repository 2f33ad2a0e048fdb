import type { DomainEvent } from '../../../platform/commands/decider.ts';
import type { AuthorizationSchema } from '../schema.ts';

/**
 * Events carry the DSL as written and the schema it was validated into: a replay restores exactly
 * the model tuples were checked against, even if the parser changes later.
 */
export interface ModelContent {
  dsl: string;
  schema: AuthorizationSchema;
}

export type FgaModelCreated = DomainEvent<'FgaModelCreated', ModelContent & { modelId: string; name: string; version: number }>;
export type FgaModelUpdated = DomainEvent<'FgaModelUpdated', Partial<ModelContent> & { modelId: string; name?: string }>;
/** previousModelId: the model that stopped being active at the same moment (null when none was). */
export type FgaModelActivated = DomainEvent<'FgaModelActivated', { modelId: string; previousModelId: string | null }>;
export type FgaModelDeleted = DomainEvent<'FgaModelDeleted', { modelId: string }>;

export type FgaModelEvent = FgaModelCreated | FgaModelUpdated | FgaModelActivated | FgaModelDeleted;

export const FGA_MODEL_EVENT_TYPES: ReadonlySet<string> = new Set<FgaModelEvent['type']>([
  'FgaModelCreated',
  'FgaModelUpdated',
  'FgaModelActivated',
  'FgaModelDeleted',
]);

/**
 * All models of a tenant live in one stream: the next version number and "one active model per
 * tenant" are then decided on one consistent state and appended atomically. Models change
 * rarely, so the stream stays short.
 */
export const modelsStreamId = (tenant: string): string => `fgamodels-${tenant}`;

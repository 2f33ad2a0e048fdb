import { z } from 'zod';
import type { DomainEvent } from '../commands/decider.ts';
import type { EventMetadata } from '../eventstore/port.ts';
import { schemaFields, type JsonSchema } from './field-paths.ts';

/**
 * Names the person whose personal fields an event carries (their aggregate's stream id), or null
 * when it names nobody (a failed login for an unknown e-mail): the fields are encrypted with that
 * person's data key (personal-data.ts).
 */
export type DataSubjectOf<Data> = (data: Data, metadata: EventMetadata) => string | null;

/** Turns the data of version n into the data of version n + 1 (older data has no schema left to type it). */
export type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

/**
 * One event type of the service: its current version, the schema of its data, and what of it is
 * sensitive (never leaves the service: hashes, sealed keys) or personal (erasable data about a
 * person), as field paths (field-paths.ts).
 */
export interface EventDefinition<Type extends string = string, Data extends z.ZodType = z.ZodType> {
  type: Type;
  version: number;
  data: Data;
  description: string;
  sensitive: readonly string[];
  personal: readonly string[];
  /** Whose personal data it is: required with `personal`. */
  dataSubject: DataSubjectOf<z.infer<Data>> | null;
  /** The event that erases a person: readers forget the person's data key when they meet it. */
  erasesDataSubject: DataSubjectOf<z.infer<Data>> | null;
  /** upcasters[n] reads version n as version n + 1, for every n below `version`. */
  upcasters: Readonly<Record<number, Upcaster>>;
  /** The data's JSON Schema (what validation, documentation and the AsyncAPI document share). */
  jsonSchema: JsonSchema;
}

export interface EventDeclaration<Type extends string, Data extends z.ZodType> {
  type: Type;
  /** 1 unless the data changed shape; raise it with an upcaster from the previous version. */
  version?: number;
  data: Data;
  description?: string;
  sensitive?: readonly string[];
  personal?: readonly string[];
  dataSubject?: DataSubjectOf<z.infer<Data>>;
  erasesDataSubject?: DataSubjectOf<z.infer<Data>>;
  upcasters?: Readonly<Record<number, Upcaster>>;
}

/** The domain event a definition describes, with the data its schema infers. */
export type EventOf<Definition extends EventDefinition> =
  Definition extends EventDefinition<infer Type, infer Data> ? DomainEvent<Type, z.infer<Data>> : never;

export function defineEvent<const Type extends string, Data extends z.ZodType>(
  declaration: EventDeclaration<Type, Data>,
): EventDefinition<Type, Data> {
  const { type, version = 1, data, description = '', sensitive = [], personal = [], upcasters = {} } = declaration;
  const { dataSubject = null, erasesDataSubject = null } = declaration;
  if (personal.length > 0 && !dataSubject) throw new Error(`${type}: personal fields need a dataSubject (whose key encrypts them)`);
  // Draft 7: the dialect of AsyncAPI 3.0 payloads, and enough for documentation.
  const jsonSchema = z.toJSONSchema(data, { target: 'draft-7' }) as JsonSchema;
  const fields = new Set(schemaFields(jsonSchema).map((field) => field.path));
  const unknown = [...sensitive, ...personal].filter((path) => !fields.has(path));
  if (unknown.length > 0) throw new Error(`${type}: sensitive or personal paths name no field of its schema: ${unknown.join(', ')}`);
  const missing = Array.from({ length: version - 1 }, (_, i) => i + 1).filter((from) => !upcasters[from]);
  if (missing.length > 0) throw new Error(`${type} v${version}: no upcaster from version ${missing.join(', ')}`);
  return { type, version, data, description, sensitive, personal, dataSubject, erasesDataSubject, upcasters, jsonSchema };
}

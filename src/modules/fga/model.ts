import { parseDsl } from './dsl/parser.ts';
import type { AuthorizationSchema } from './schema.ts';
import { TypeSystem } from './typesystem.ts';

export interface CompiledModel {
  schema: AuthorizationSchema;
  typesystem: TypeSystem;
}

/** Parses and validates DSL text: what model creation and update need before storing. */
export function compileModel(dsl: string): CompiledModel {
  const schema = parseDsl(dsl);
  return { schema, typesystem: TypeSystem.fromSchema(schema) };
}

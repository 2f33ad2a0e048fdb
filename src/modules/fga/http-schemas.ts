import type { FastifySchema } from 'fastify';
import { z } from 'zod';
import { requirePermission } from '../../platform/http/authentication.ts';
import type { Permission } from '../roles/permissions.ts';
import { NAME_PATTERN } from './schema.ts';

/** Route options shared by every FGA route: its permission (spec, Requires), tag and security. */
export function fgaRoute<S extends FastifySchema>(permission: Permission, summary: string, schema: S) {
  return {
    schema: { tags: ['FGA'], security: [{ bearer: [] }], summary, ...schema },
    onRequest: [requirePermission(permission)],
  };
}

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

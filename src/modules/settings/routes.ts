import { z } from 'zod';
import { validationError, type ErrorDetail } from '../../platform/errors.ts';
import { ok, okBody, success, successBody } from '../../platform/http/envelopes.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { permission, route } from '../../platform/http/route.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { settingsCommands } from './commands.ts';
import type { SettingsQueries } from './provider.ts';
import { flatten, SECTION_NAMES, sectionSchemas } from './sections.ts';

const putBody = z.strictObject({ section: z.enum(SECTION_NAMES as [string, ...string[]]), data: z.record(z.string(), z.unknown()) });

const nestedSchema = z.object(sectionSchemas);
const flatSchema = z.object({
  ...sectionSchemas.tokens.shape,
  ...sectionSchemas.login.shape,
  ...sectionSchemas.security.shape,
  ...sectionSchemas.bruteForce.shape,
  updatedAt: z.string().nullable().describe('the last change, or the creation of the tenant (ISO 8601)'),
});

/** GET and PUT /api/realm-settings (admin:all). Changes apply to sessions started afterwards. */
export function registerSettingsRoutes(app: HttpServer, deps: { commands: ReturnType<typeof settingsCommands>; queries: SettingsQueries }): void {
  const guard = { tags: ['Settings'], access: permission('admin:all') };

  route(app, {
    ...guard,
    method: 'GET',
    url: '/api/realm-settings',
    summary: 'Security settings (flat)',
    responses: { 200: okBody(flatSchema) },
    handler: async (request) => {
      const { settings, updatedAt } = await deps.queries.nested(tenantOf(request).name);
      return ok({ ...flatten(settings), updatedAt });
    },
  });

  route(app, {
    ...guard,
    method: 'PUT',
    url: '/api/realm-settings',
    summary: 'Update one section; answers the nested settings',
    body: putBody,
    envelope: 'success',
    responses: { 200: successBody(nestedSchema) },
    handler: async (request) => {
      const section = request.body.section as keyof typeof sectionSchemas;
      const parsed = sectionSchemas[section].partial().safeParse(request.body.data);
      if (!parsed.success) {
        const details: ErrorDetail[] = parsed.error.issues.map((issue) => ({
          path: ['data', ...(issue.path.length ? issue.path : (issue as { keys?: string[] }).keys ?? [])].join('.'),
          message: issue.message,
        }));
        throw validationError(`Invalid ${details.map((d) => d.path.replace(/^data\./, '')).join(', ')}`, details);
      }
      // The command's resulting state is the nested settings the read model shows: never stale.
      const { state } = await deps.commands.update(tenantOf(request).name, section, parsed.data, commandContextOf(request));
      return success(state);
    },
  });
}

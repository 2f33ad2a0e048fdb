import { z } from 'zod';
import { validationError, type ErrorDetail } from '../../platform/errors.ts';
import { requirePermission } from '../../platform/http/authentication.ts';
import { ok, success } from '../../platform/http/envelopes.ts';
import { commandContextOf, type ReadYourWrites } from '../../platform/http/request-context.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import type { settingsCommands } from './commands.ts';
import type { SettingsQueries } from './provider.ts';
import { flatten, SECTION_NAMES, sectionSchemas } from './sections.ts';

const putBody = z.strictObject({ section: z.enum(SECTION_NAMES as [string, ...string[]]), data: z.record(z.string(), z.unknown()) });

/** GET and PUT /api/realm-settings (admin:all). Changes apply to sessions started afterwards. */
export function registerSettingsRoutes(
  app: HttpServer,
  deps: { commands: ReturnType<typeof settingsCommands>; queries: SettingsQueries; readYourWrites: ReadYourWrites },
): void {
  const guard = { onRequest: [requirePermission('admin:all')] };

  app.get('/api/realm-settings', { ...guard, schema: { tags: ['Settings'], summary: 'Security settings (flat)', security: [{ bearer: [] }] } }, async (request) => {
    const { settings, updatedAt } = await deps.queries.nested(tenantOf(request).name);
    return ok({ ...flatten(settings), updatedAt });
  });

  app.put(
    '/api/realm-settings',
    { ...guard, schema: { tags: ['Settings'], summary: 'Update one section; answers the nested settings', security: [{ bearer: [] }], body: putBody } },
    async (request) => {
      const section = request.body.section as keyof typeof sectionSchemas;
      const parsed = sectionSchemas[section].partial().safeParse(request.body.data);
      if (!parsed.success) {
        const details: ErrorDetail[] = parsed.error.issues.map((issue) => ({
          path: ['data', ...(issue.path.length ? issue.path : (issue as { keys?: string[] }).keys ?? [])].join('.'),
          message: issue.message,
        }));
        throw validationError(`Invalid ${details.map((d) => d.path.replace(/^data\./, '')).join(', ')}`, details);
      }
      const tenant = tenantOf(request).name;
      const { position } = await deps.commands.update(tenant, section, parsed.data, commandContextOf(request));
      await deps.readYourWrites(position, ['settings']);
      return success((await deps.queries.nested(tenant)).settings);
    },
  );
}

import { applicationsProjection } from '../projections/applications.ts';
import { auditProjection } from '../projections/audit.ts';
import { fgaProjection } from '../projections/fga.ts';
import { fgaHistoryProjection } from '../projections/fga-history.ts';
import { rolesProjection } from '../projections/roles.ts';
import { sessionsProjection } from '../projections/sessions.ts';
import { settingsProjection } from '../projections/settings.ts';
import { tenantsProjection } from '../projections/tenants.ts';
import { usersProjection } from '../projections/users.ts';
import { webhooksProjection } from '../projections/webhooks.ts';
import { logStreamsProjection } from '../projections/log-streams.ts';
import type { Projection } from './platform/projections/projection.ts';

/** Every read model of the service, in one list for the runner and the rebuild command. */
export const allProjections: Projection[] = [tenantsProjection, rolesProjection, usersProjection, settingsProjection, sessionsProjection, fgaProjection, fgaHistoryProjection, auditProjection, webhooksProjection, logStreamsProjection, applicationsProjection];

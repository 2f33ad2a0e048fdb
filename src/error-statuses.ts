import { errorStatuses as applications } from './modules/applications/index.ts';
import { errorStatuses as auth } from './modules/auth/index.ts';
import { errorStatuses as emailLinks } from './modules/email-links/index.ts';
import { errorStatuses as fga } from './modules/fga/index.ts';
import { errorStatuses as mfa } from './modules/mfa/index.ts';
import { errorStatuses as oauth } from './modules/oauth/index.ts';
import { errorStatuses as roles } from './modules/roles/index.ts';
import { errorStatuses as sessions } from './modules/sessions/index.ts';
import { errorStatuses as tenants } from './modules/tenants/index.ts';
import { errorStatuses as users } from './modules/users/index.ts';
import { errorStatuses as webhooks } from './modules/webhooks/index.ts';
import { errorStatuses as logStreams } from './modules/log-streams/index.ts';
import { platformErrorStatuses } from './platform/errors.ts';
import { composeErrorStatuses } from './platform/http/error-statuses.ts';

/** Every code a module raises, per module: what the HTTP edge maps to statuses. */
export const moduleErrorStatuses = { platform: platformErrorStatuses, applications, auth, emailLinks, fga, mfa, oauth, roles, sessions, tenants, users, webhooks, logStreams };

export const errorStatuses = composeErrorStatuses(...Object.values(moduleErrorStatuses));

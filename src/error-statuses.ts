import { errorStatuses as auth } from './modules/auth/errors.ts';
import { errorStatuses as emailLinks } from './modules/email-links/errors.ts';
import { errorStatuses as fga } from './modules/fga/app-errors.ts';
import { errorStatuses as roles } from './modules/roles/errors.ts';
import { errorStatuses as sessions } from './modules/sessions/errors.ts';
import { errorStatuses as tenants } from './modules/tenants/errors.ts';
import { errorStatuses as users } from './modules/users/errors.ts';
import { errorStatuses as webhooks } from './modules/webhooks/errors.ts';
import { platformErrorStatuses } from './platform/errors.ts';
import { composeErrorStatuses } from './platform/http/error-statuses.ts';

/** Every code a module raises, per module: what the HTTP edge maps to statuses. */
export const moduleErrorStatuses = { platform: platformErrorStatuses, auth, emailLinks, fga, roles, sessions, tenants, users, webhooks };

export const errorStatuses = composeErrorStatuses(...Object.values(moduleErrorStatuses));

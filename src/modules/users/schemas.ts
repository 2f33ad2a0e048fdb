import { z } from 'zod';
import { MAX_PASSWORD_LENGTH } from './passwords.ts';

/** Field rules shared by every route that takes user fields (admin create, signup, password flows). */
export const emailSchema = z.email().max(254);
export const nameSchema = z.string().trim().min(1).max(100);
export const usernameSchema = z.string().trim().min(1).max(64).regex(/^[\p{L}\p{N}._@+-]+$/u, 'letters, digits and . _ @ + - only');
export const passwordSchema = z.string().min(1).max(MAX_PASSWORD_LENGTH);

// What the users routes answer (the read model's views).
const timestamp = z.string().describe('ISO 8601');
export const userSummarySchema = z.object({
  id: z.string(),
  email: z.string(),
  username: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  enabled: z.boolean(),
  emailVerified: z.boolean(),
  createdAt: timestamp,
  roles: z.array(z.string()).describe('role names'),
});
export const userDetailSchema = userSummarySchema.extend({
  phoneNumber: z.string().nullable(),
  phoneNumberVerified: z.boolean(),
  lastLoginAt: timestamp.nullable(),
  lockedUntil: timestamp.nullable().describe('set while failed logins keep the account locked'),
  twoFactor: z.object({ totpEnabled: z.boolean(), smsEnabled: z.boolean(), webauthnEnabled: z.boolean() }),
});
/** An update answers the id, e-mail and enabled flag, and the fields it was sent. */
export const userUpdatedSchema = userSummarySchema
  .pick({ id: true, email: true, enabled: true })
  .extend(userSummarySchema.pick({ username: true, firstName: true, lastName: true }).partial().shape);
export const userRoleSchema = z.object({ id: z.string(), name: z.string(), description: z.string(), color: z.string() });

/** `?asOf=` of GET /api/users/{id}: an ISO 8601 instant with Z or an offset. */
export const asOfQuery = z.object({
  asOf: z.iso
    .datetime({ offset: true })
    .transform((text) => new Date(text))
    .optional()
    .describe('ISO 8601 instant (view:audit too): the user as it was then, folded from its events'),
});

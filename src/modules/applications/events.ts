import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

export const APPLICATION_TYPES = ['web', 'spa', 'native', 'm2m'] as const;
export type ApplicationType = (typeof APPLICATION_TYPES)[number];

const settingsFields = {
  name: z.string(),
  redirectUris: z.array(z.string()),
  postLogoutRedirectUris: z.array(z.string()),
  allowedOrigins: z.array(z.string()),
  grantTypes: z.array(z.string()),
  /** m2m: the permission names (and `scim`) client_credentials may grant. */
  scopes: z.array(z.string()),
};

/**
 * The client secret as events carry it: only its SHA-256 (the secret is 256 random bits, so a
 * fast hash is right), kept off the bus all the same.
 */
export const applicationCreated = defineEvent({
  type: 'ApplicationCreated',
  description: 'An OAuth client; a confidential one (web, m2m) with the hash of its secret, never the secret.',
  data: z.strictObject({ applicationId: z.string(), clientId: z.string(), type: z.enum(APPLICATION_TYPES), ...settingsFields, secretHash: z.string().nullable() }),
  sensitive: ['secretHash'],
});
export const applicationUpdated = defineEvent({
  type: 'ApplicationUpdated',
  description: 'The changed settings of an application.',
  data: z.strictObject({ applicationId: z.string(), ...settingsFields }).partial().required({ applicationId: true }),
});
export const applicationSecretRotated = defineEvent({
  type: 'ApplicationSecretRotated',
  description: 'A new client secret (its hash); the previous one stops working at once.',
  data: z.strictObject({ applicationId: z.string(), secretHash: z.string() }),
  sensitive: ['secretHash'],
});
export const applicationDeleted = defineEvent({ type: 'ApplicationDeleted', data: z.strictObject({ applicationId: z.string() }) });

export const applicationEvents = [applicationCreated, applicationUpdated, applicationSecretRotated, applicationDeleted];

export type ApplicationCreated = EventOf<typeof applicationCreated>;
export type ApplicationUpdated = EventOf<typeof applicationUpdated>;
export type ApplicationSecretRotated = EventOf<typeof applicationSecretRotated>;
export type ApplicationDeleted = EventOf<typeof applicationDeleted>;
export type ApplicationEvent = EventOf<(typeof applicationEvents)[number]>;

export type ApplicationSettings = Omit<ApplicationCreated['data'], 'applicationId' | 'clientId' | 'type' | 'secretHash'>;

export const applicationStreamId = (tenant: string, applicationId: string): string => `application-${tenant}.${applicationId}`;

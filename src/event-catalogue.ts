import { applicationEvents } from './modules/applications/index.ts';
import { loginEvents } from './modules/auth/index.ts';
import { mfaEvents } from './modules/mfa/index.ts';
import { emailLinkEvents } from './modules/email-links/index.ts';
import { fgaModelEvents, fgaTupleEvents } from './modules/fga/index.ts';
import { signingKeyEvents } from './modules/keys/index.ts';
import { authorizationCodeEvents, deviceAuthorizationEvents } from './modules/oauth/index.ts';
import { roleEvents } from './modules/roles/index.ts';
import { sessionEvents } from './modules/sessions/index.ts';
import { settingsEvents } from './modules/settings/index.ts';
import { tenantEvents } from './modules/tenants/index.ts';
import { userEvents, userStreamId } from './modules/users/index.ts';
import { webhookEvents } from './modules/webhooks/index.ts';
import { logStreamEvents } from './modules/log-streams/index.ts';
import { reservationEvents } from './platform/commands/reservations.ts';
import type { EventMetadata, EventStore, RecordedEvent } from './platform/eventstore/port.ts';
import { EventCatalogue } from './platform/events/catalogue.ts';
import { CatalogueEventStore } from './platform/events/catalogue-store.ts';
import type { DataKeys } from './platform/crypto/data-keys.ts';
import { PersonalDataCipher } from './platform/events/personal-data.ts';

/**
 * Whose key seals the request metadata (clientIp, userAgent) of an event that names no person: the
 * actor's, as a user of the event's tenant. Any actor may be one; the key store tells (a user's key
 * exists from their creation on), so clients, 'system' and operators of another tenant find none.
 */
const actorAsUser = ({ tenantId, actor }: EventMetadata): string => userStreamId(tenantId, actor);

/** Every event type the service writes: the store refuses any other, the relay and the docs read it. */
export const eventCatalogue = new EventCatalogue([
  ...tenantEvents,
  ...userEvents,
  ...roleEvents,
  ...loginEvents,
  ...mfaEvents,
  ...sessionEvents,
  ...emailLinkEvents,
  ...signingKeyEvents,
  ...settingsEvents,
  ...fgaModelEvents,
  ...fgaTupleEvents,
  ...webhookEvents,
  ...applicationEvents,
  ...authorizationCodeEvents,
  ...deviceAuthorizationEvents,
  ...logStreamEvents,
  ...reservationEvents,
], actorAsUser);

/**
 * The store as the service must use it: catalogue-checked appends with personal fields sealed by
 * their person's data key, reads revealed (or "[ERASED]") and upcast (applied once).
 */
export function cataloguedStore(store: EventStore, dataKeys: DataKeys): EventStore {
  return store instanceof CatalogueEventStore ? store : new CatalogueEventStore(store, eventCatalogue, new PersonalDataCipher(eventCatalogue, dataKeys));
}

/** What of an event the relay may publish. */
export const publicEventData = (event: RecordedEvent): unknown => eventCatalogue.publicData(event);

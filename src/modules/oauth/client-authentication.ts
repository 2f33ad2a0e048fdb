import { isPublicType, secretMatches, type Application, type ApplicationDirectory } from '../applications/index.ts';
import { oauthError } from './errors.ts';

type Params = Record<string, string | undefined>;

const unknownClient = () => oauthError('invalid_client', 'Client authentication failed');

/**
 * Authenticates the client of a token request in `tenant` (RFC 6749 2.3): a confidential client
 * (web, m2m) by its secret, sent with client_secret_basic or client_secret_post; a public client
 * (spa, native) by its client_id alone (method none), which it must not pair with a secret.
 * Unknown client and wrong secret answer alike.
 */
export async function authenticateClient(applications: ApplicationDirectory, tenant: string, params: Params): Promise<Application> {
  const clientId = params.client_id;
  if (!clientId) throw oauthError('invalid_client', 'The client_id parameter (or Basic credentials) is required');
  const application = await applications.byClientId(tenant, clientId);
  if (!application) throw unknownClient();
  if (isPublicType(application.type)) {
    if (params.client_auth_method !== 'none') throw oauthError('invalid_client', 'A public client authenticates with its client_id only');
    return application;
  }
  if (params.client_auth_method === 'none' || !secretMatches(params.client_secret ?? '', application.secretHash)) throw unknownClient();
  return application;
}

/** invalid_client for a client whose application does not hold `grantType` (RFC 6749 5.2: unauthorized_client). */
export function assertGrantAllowed(application: Application, grantType: string): void {
  if (!application.grantTypes.includes(grantType)) throw oauthError('unauthorized_client', `This client may not use ${grantType}`);
}

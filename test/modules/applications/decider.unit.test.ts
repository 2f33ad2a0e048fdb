import { describe, expect, it } from 'vitest';
import { applicationDecider } from '../../../src/modules/applications/decider.ts';
import type { ApplicationEvent } from '../../../src/modules/applications/events.ts';
import { assertCoherent } from '../../../src/modules/applications/rules.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(applicationDecider);
const settings = {
  name: 'portal',
  redirectUris: ['https://portal.example/cb'],
  postLogoutRedirectUris: [],
  allowedOrigins: ['https://portal.example'],
  grantTypes: ['authorization_code', 'refresh_token'],
  scopes: [],
};
const ids = { applicationId: 'a1', clientId: 'acme.a1' };
const create = { type: 'CreateApplication' as const, ...ids, applicationType: 'web' as const, settings, secretHash: 'hash-1' };
const created: ApplicationEvent = { type: 'ApplicationCreated', data: { ...ids, type: 'web', ...settings, secretHash: 'hash-1' } };

describe('application decider', () => {
  it('creates an application once, its secret only hashed', () => {
    spec.given([]).when(create).then([created]);
    spec.given([created]).when(create).thenThrows('APPLICATION_EXISTS');
  });

  it('refuses settings that do not fit the type', () => {
    spec.given([]).when({ ...create, applicationType: 'spa', secretHash: null, settings: { ...settings, grantTypes: ['client_credentials'] } }).thenThrows('VALIDATION_ERROR');
    spec.given([]).when({ ...create, settings: { ...settings, scopes: ['manage:users'] } }).thenThrows('VALIDATION_ERROR');
    spec.given([]).when({ ...create, applicationType: 'm2m', settings: { ...settings, grantTypes: ['client_credentials'], scopes: ['rule:the-world'] } }).thenThrows('VALIDATION_ERROR');
    // Redirect URIs: https, or http on loopback; no fragments; private-use schemes for native apps only.
    for (const uri of ['http://portal.example/cb', 'https://portal.example/cb#x', 'com.example.app:/cb', 'not a uri']) {
      spec.given([]).when({ ...create, settings: { ...settings, redirectUris: [uri] } }).thenThrows('VALIDATION_ERROR');
    }
    spec.given([]).when({ ...create, applicationType: 'native', secretHash: null, settings: { ...settings, redirectUris: ['com.example.app:/cb', 'http://127.0.0.1:8123/cb'] } }).then([
      { type: 'ApplicationCreated', data: { ...ids, type: 'native', ...settings, redirectUris: ['com.example.app:/cb', 'http://127.0.0.1:8123/cb'], secretHash: null } },
    ]);
    spec.given([]).when({ ...create, settings: { ...settings, allowedOrigins: ['https://portal.example/path'] } }).thenThrows('VALIDATION_ERROR');
  });

  it('tells an unknown grant name (device_code for the URN) from a grant the type may not hold', () => {
    const detailsOf = (type: 'web' | 'spa', grantTypes: string[]) => {
      try {
        assertCoherent(type, { ...settings, grantTypes });
      } catch (error) {
        return (error as { details?: unknown }).details;
      }
      return null;
    };
    expect(detailsOf('web', ['authorization_code', 'device_code'])).toEqual([
      {
        path: 'grantTypes.1',
        message:
          'unknown grant type device_code (one of authorization_code, refresh_token, client_credentials, ' +
          'urn:ietf:params:oauth:grant-type:device_code, urn:ietf:params:oauth:grant-type:token-exchange)',
      },
    ]);
    expect(detailsOf('spa', ['urn:ietf:params:oauth:grant-type:device_code'])).toEqual([
      { path: 'grantTypes.0', message: 'a spa application cannot use urn:ietf:params:oauth:grant-type:device_code' },
    ]);
  });

  it('records only the settings that change, checked against the type', () => {
    spec.given([created]).when({ type: 'UpdateApplication', changes: { name: 'portal', allowedOrigins: ['https://app.example'] } }).then([
      { type: 'ApplicationUpdated', data: { applicationId: 'a1', allowedOrigins: ['https://app.example'] } },
    ]);
    spec.given([created]).when({ type: 'UpdateApplication', changes: { redirectUris: settings.redirectUris } }).then([]);
    spec.given([created]).when({ type: 'UpdateApplication', changes: { grantTypes: ['client_credentials'] } }).thenThrows('VALIDATION_ERROR');
    spec.given([]).when({ type: 'UpdateApplication', changes: { name: 'x' } }).thenThrows('NOT_FOUND');
  });

  it('rotates the secret of a confidential client only', () => {
    spec.given([created]).when({ type: 'RotateApplicationSecret', secretHash: 'hash-2' }).then([{ type: 'ApplicationSecretRotated', data: { applicationId: 'a1', secretHash: 'hash-2' } }]);
    const spa: ApplicationEvent = { type: 'ApplicationCreated', data: { ...ids, type: 'spa', ...settings, secretHash: null } };
    spec.given([spa]).when({ type: 'RotateApplicationSecret', secretHash: 'hash-2' }).thenThrows('APPLICATION_IS_PUBLIC');
  });

  it('a deleted application takes no more commands', () => {
    const deleted: ApplicationEvent = { type: 'ApplicationDeleted', data: { applicationId: 'a1' } };
    spec.given([created]).when({ type: 'DeleteApplication' }).then([deleted]);
    spec.given([created, deleted]).when({ type: 'RotateApplicationSecret', secretHash: 'h' }).thenThrows('NOT_FOUND');
  });
});

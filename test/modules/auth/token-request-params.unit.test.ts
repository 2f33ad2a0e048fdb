import { describe, expect, it } from 'vitest';
import { withClientCredentials } from '../../../src/modules/auth/token-request-params.ts';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('the token request parameters with the client credentials folded in', () => {
  it('says which method the client used, whatever client_auth_method the body sent', () => {
    const forged = { grant_type: 'client_credentials', client_auth_method: 'client_secret_basic' };
    expect(withClientCredentials({ ...forged, client_id: 'acme.c1' }, undefined)).toEqual({ grant_type: 'client_credentials', client_id: 'acme.c1', client_auth_method: 'none' });
    expect(withClientCredentials({ ...forged, client_id: 'acme.c1', client_secret: 's3' }, undefined)).toEqual({
      grant_type: 'client_credentials',
      client_id: 'acme.c1',
      client_secret: 's3',
      client_auth_method: 'client_secret_post',
    });
    expect(withClientCredentials({ grant_type: 'client_credentials', client_auth_method: 'none' }, basic('acme.c1', 'a b+c'))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'acme.c1',
      client_secret: 'a b c',
      client_auth_method: 'client_secret_basic',
    });
  });

  it('leaves the body it was given as it was', () => {
    const body = { grant_type: 'client_credentials', client_auth_method: 'none' };
    withClientCredentials(body, basic('acme.c1', 's3'));
    expect(body).toEqual({ grant_type: 'client_credentials', client_auth_method: 'none' });
  });

  it('refuses two methods in one request, a client_id other than the Basic one, and malformed Basic credentials', () => {
    expect(() => withClientCredentials({ client_secret: 's3' }, basic('acme.c1', 's3'))).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => withClientCredentials({ client_id: 'acme.c2' }, basic('acme.c1', 's3'))).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => withClientCredentials({}, `Basic ${Buffer.from('no-colon').toString('base64')}`)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => withClientCredentials({}, basic('acme.c1', '%E0%A4%A'))).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});

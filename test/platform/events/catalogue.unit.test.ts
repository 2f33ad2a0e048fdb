import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventCatalogue } from '../../../src/platform/events/catalogue.ts';
import { defineEvent } from '../../../src/platform/events/define-event.ts';

describe('event definitions and the catalogue', () => {
  it('refuses declarations that name no field, personal fields without a data subject, or versions without an upcaster', () => {
    const data = z.strictObject({ email: z.string(), roles: z.array(z.strictObject({ name: z.string() })) });
    expect(() => defineEvent({ type: 'X', data, personal: ['mail'], dataSubject: () => null })).toThrow('X: sensitive or personal paths name no field of its schema: mail');
    expect(() => defineEvent({ type: 'X', data, sensitive: ['roles[].id'] })).toThrow('roles[].id');
    const subject = () => 'person';
    expect(() => defineEvent({ type: 'X', data, personal: ['email', 'roles[].name'], dataSubject: subject })).not.toThrow();
    expect(() => defineEvent({ type: 'X', data, personal: ['email'] })).toThrow('X: personal fields need a dataSubject');
    expect(() => defineEvent({ type: 'X', version: 3, data, upcasters: { 1: (d) => d } })).toThrow('X v3: no upcaster from version 2');
  });

  it('strips sensitive fields at any depth and leaves the rest', () => {
    const definition = defineEvent({
      type: 'Enrolled',
      data: z.strictObject({ userId: z.string(), factors: z.array(z.strictObject({ label: z.string(), sealedSeed: z.string() })), secret: z.string().nullable() }),
      sensitive: ['factors[].sealedSeed', 'secret'],
    });
    const catalogue = new EventCatalogue([definition]);
    const event = { id: 'e', type: 'Enrolled', streamId: 's', revision: 0n, position: 1n, metadata: { tenantId: 't', actor: 'a', occurredAt: 'now' } };
    const data = { userId: 'u', factors: [{ label: 'phone', sealedSeed: 'x' }, { label: 'key', sealedSeed: 'y' }], secret: 's' };
    expect(catalogue.publicData({ ...event, data })).toEqual({ userId: 'u', factors: [{ label: 'phone' }, { label: 'key' }] });
    expect(data.factors[0]).toEqual({ label: 'phone', sealedSeed: 'x' });
    expect(catalogue.maskedData({ ...event, data })).toEqual({ userId: 'u', factors: [{ label: 'phone', sealedSeed: '[REDACTED]' }, { label: 'key', sealedSeed: '[REDACTED]' }], secret: '[REDACTED]' });
    expect(data).toEqual({ userId: 'u', factors: [{ label: 'phone', sealedSeed: 'x' }, { label: 'key', sealedSeed: 'y' }], secret: 's' });
    // Nothing to strip: the data itself, not a copy (the history feed reads millions of such events).
    const clean = { userId: 'u', factors: [], secret: null };
    expect(catalogue.publicData({ ...event, data: { userId: 'u' } })).toEqual({ userId: 'u' });
    expect(catalogue.maskedData({ ...event, data: clean })).toBe(clean);
    expect(() => catalogue.publicData({ ...event, type: 'Unknown', data })).toThrow('not in the event catalogue');
  });
});

import { describe, expect, it } from 'vitest';
import { refusalReason } from '../../../src/platform/outbound/address-policy.ts';

describe('outbound address policy', () => {
  it('refuses every internal range with its name', () => {
    const refused: [string, string][] = [
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['::1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.254', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.10.10', 'link-local'],
      ['fe80::1', 'link-local'],
      ['fc00::1', 'unique-local'],
      ['fd12:3456::1', 'unique-local'],
      ['100.64.0.1', 'shared (CGNAT)'],
      ['100.127.255.254', 'shared (CGNAT)'],
      ['0.0.0.0', 'reserved'],
      ['::', 'reserved'],
      ['255.255.255.255', 'reserved'],
      ['224.0.0.1', 'reserved'],
      ['169.254.169.254', 'metadata'],
      ['fd00:ec2::254', 'metadata'],
      // IPv4 inside IPv6 is judged by the IPv4 address.
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::ffff:169.254.169.254', 'metadata'],
      ['64:ff9b::10.0.0.1', 'private'],
    ];
    for (const [address, reason] of refused) expect(refusalReason(address, false), address).toBe(reason);
  });

  it('lets public addresses through', () => {
    for (const address of ['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(refusalReason(address, false), address).toBeNull();
    }
  });

  it('with private targets allowed, still refuses the metadata services', () => {
    expect(refusalReason('127.0.0.1', true)).toBeNull();
    expect(refusalReason('10.0.0.1', true)).toBeNull();
    expect(refusalReason('169.254.169.254', true)).toBe('metadata');
    expect(refusalReason('fd00:ec2::254', true)).toBe('metadata');
    expect(refusalReason('not an address', true)).toBe('reserved');
  });
});

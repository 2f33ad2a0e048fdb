import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Why an address may not be the target of an outbound request, or null when it may. */
export type RefusalReason = 'metadata' | 'loopback' | 'private' | 'link-local' | 'unique-local' | 'shared (CGNAT)' | 'reserved';

function blockList(ranges: [string, number][]): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, isIPv4(network) ? 'ipv4' : 'ipv6');
  return list;
}

/** Cloud instance metadata services: refused even when private networks are allowed. */
const METADATA = blockList([
  ['169.254.169.254', 32],
  ['fd00:ec2::254', 128],
]);

/** Checked in order, so an address gets the most specific name. */
const INTERNAL: [RefusalReason, BlockList][] = [
  ['loopback', blockList([['127.0.0.0', 8], ['::1', 128]])],
  ['private', blockList([['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]])],
  ['link-local', blockList([['169.254.0.0', 16], ['fe80::', 10]])],
  ['unique-local', blockList([['fc00::', 7]])],
  ['shared (CGNAT)', blockList([['100.64.0.0', 10]])],
  [
    'reserved',
    blockList([
      ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on Linux
      ['192.0.0.0', 24],
      ['198.18.0.0', 15],
      ['224.0.0.0', 4], // multicast
      ['240.0.0.0', 4], // reserved and broadcast
      ['::', 128],
      ['ff00::', 8],
      ['64:ff9b:1::', 48],
    ]),
  ],
];

/** `::ffff:a.b.c.d` (and the NAT64 prefix 64:ff9b::/96) carry an IPv4 address: judge that one. */
function embeddedIPv4(address: string): string | null {
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1]!;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/**
 * Whether an outbound request may connect to `address` (an IP literal, already resolved). Internal
 * ranges are allowed only with `allowPrivateNetworks` (tests, on-premises receivers); metadata
 * addresses never are.
 */
export function refusalReason(address: string, allowPrivateNetworks: boolean): RefusalReason | null {
  const v4 = isIPv6(address) ? embeddedIPv4(address) : null;
  if (v4) return refusalReason(v4, allowPrivateNetworks);
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
  if (!family) return 'reserved';
  if (METADATA.check(address, family)) return 'metadata';
  if (allowPrivateNetworks) return null;
  for (const [reason, list] of INTERNAL) if (list.check(address, family)) return reason;
  return null;
}

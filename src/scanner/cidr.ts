/**
 * CIDR expansion for scans: every address of a block, IPv4 or IPv6, at most MAX_CIDR_ADDRESSES (a target's
 * bound), canonical text (IPv6 with the longest zero run compressed).
 */
import { isIPv4 } from 'node:net';

export const MAX_CIDR_ADDRESSES = 1024;

export function expandCidr(cidr: string): string[] {
  const [address, prefixText] = cidr.split('/') as [string, string];
  const prefix = Number(prefixText);
  const v4 = isIPv4(address);
  const bits = v4 ? 32 : 128;
  const size = 1n << BigInt(bits - prefix);
  if (size > BigInt(MAX_CIDR_ADDRESSES)) throw new Error(`CIDR ${cidr} has more than ${MAX_CIDR_ADDRESSES} addresses`);
  const start = (v4 ? ipv4ToBigInt(address) : ipv6ToBigInt(address)) & ~(size - 1n);
  const addresses: string[] = [];
  for (let i = 0n; i < size; i++) addresses.push(v4 ? bigIntToIpv4(start + i) : bigIntToIpv6(start + i));
  return addresses;
}

function ipv4ToBigInt(address: string): bigint {
  return address.split('.').reduce((acc, part) => (acc << 8n) + BigInt(Number(part)), 0n);
}

function bigIntToIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => ((value >> shift) & 255n).toString()).join('.');
}

function ipv6ToBigInt(address: string): bigint {
  const [head, tail = ''] = address.split('::') as [string, string?];
  const headParts = head ? head.split(':') : [];
  const tailParts = address.includes('::') ? (tail ? tail.split(':') : []) : [];
  const missing = 8 - headParts.length - tailParts.length;
  const parts = [...headParts, ...Array(address.includes('::') ? missing : 0).fill('0'), ...tailParts];
  return parts.reduce((acc, part) => (acc << 16n) + BigInt(parseInt(part || '0', 16)), 0n);
}

function bigIntToIpv6(value: bigint): string {
  const parts: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) parts.push(((value >> shift) & 0xffffn).toString(16));
  // Canonical compression of the longest run of zero groups.
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (parts[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && parts[j] === '0') j++;
    if (j - i > bestLength && j - i > 1) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestStart === -1) return parts.join(':');
  return `${parts.slice(0, bestStart).join(':')}::${parts.slice(bestStart + bestLength).join(':')}`;
}

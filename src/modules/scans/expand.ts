import { expandCidr } from '../../scanner/cidr.js';

/** What a target names, as the hosts the dns step resolves: a CIDR becomes its (at most 1,024) addresses. */
export function hostsOfTarget(target: { type: string; value: string }): string[] {
  switch (target.type) {
    case 'url':
      return [new URL(target.value).hostname.replace(/^\[|\]$/g, '')];
    case 'cidr':
      return expandCidr(target.value);
    default:
      return [target.value];
  }
}

/** The port a URL target names (explicit or the scheme's default). */
export function portOfUrl(value: string): number {
  const url = new URL(value);
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

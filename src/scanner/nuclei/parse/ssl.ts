/**
 * One `ssl` block (nuclei pkg/protocols/ssl, over tlsx): address, TLS version bounds, cipher suites, scan mode,
 * and operators over the handshake data (tls_version, cipher, subject_dn, not_after, expired, self_signed...).
 * Handshakes are made with node:tls (OpenSSL), so what OpenSSL cannot do is refused at parse time: SSLv3, cipher
 * suites it does not know, version/cipher enumeration, and `revoked` (which needs OCSP/CRL fetches).
 */
import type { SslRequestBlock, TlsVersionName } from '../types.js';
import { type Ctx, isRecord, pathString, type Seg } from './context.js';
import { checkBlockFields, checkSentText, OPERATOR_FIELDS, parseOperatorLists } from './host-blocks.js';
import { openSslCipherName } from './ssl-ciphers.js';

/** Variables nuclei gives ssl requests: the input host:port split, plus the dns variables of the host. */
export const SSL_INPUT_VARIABLES = ['Hostname', 'Host', 'Port', 'FQDN'];

const VERSIONS: Record<string, TlsVersionName> = { sslv3: 'sslv3', ssl30: 'sslv3', tls10: 'tls10', tls11: 'tls11', tls12: 'tls12', tls13: 'tls13' };
const SCAN_MODES = ['auto', 'ctls', 'ztls', 'openssl'];

/** DSL fields tlsx fills that we cannot compute honestly. */
const UNAVAILABLE_FIELDS: Record<string, string> = {
  revoked: 'revocation (OCSP/CRL lookups) is not checked',
  ja3_hash: 'JA3 fingerprints are not computed',
  ja3s_hash: 'JA3S fingerprints are not computed',
  version_enum: 'TLS version enumeration is not supported',
  cipher_enum: 'cipher enumeration is not supported',
  client_hello: 'raw hello messages are not recorded',
  servers_hello: 'raw hello messages are not recorded',
};

const SUPPORTED = new Set([...OPERATOR_FIELDS, 'address', 'min_version', 'max_version', 'cipher_suites', 'scan_mode']);
const ENUMERATION_FIELDS = ['tls_version_enum', 'tls_cipher_enum', 'tls_cipher_types'];

function version(ctx: Ctx, raw: Record<string, unknown>, key: string, segs: Seg[], skipReasons: string[]): TlsVersionName | undefined {
  const v = ctx.str(raw, key, segs)?.trim().toLowerCase();
  if (!v) return undefined;
  const known = VERSIONS[v];
  if (!known) {
    ctx.error(`unknown TLS version ${JSON.stringify(v)} (expected sslv3, tls10, tls11, tls12 or tls13)`, [...segs, key]);
    return undefined;
  }
  if (known === 'sslv3' && !skipReasons.some((r) => r.startsWith('SSLv3'))) {
    skipReasons.push('SSLv3 handshakes are not possible with node:tls (OpenSSL 3 has no SSLv3)');
    ctx.warn('SSLv3 handshakes are not possible with node:tls (OpenSSL 3 has no SSLv3); this request block is skipped', [...segs, key]);
  }
  return known;
}

export function parseSslBlock(
  ctx: Ctx,
  raw: Record<string, unknown>,
  segs: Seg[],
  index: number,
  templateVars: ReadonlySet<string>,
  templateStop: boolean,
): SslRequestBlock | undefined {
  const enumeration = ENUMERATION_FIELDS.filter((k) => raw[k] !== undefined && raw[k] !== false && raw[k] !== null);
  const skipReasons = checkBlockFields(ctx, raw, segs, new Set([...SUPPORTED, ...ENUMERATION_FIELDS]));
  for (const key of enumeration) {
    if (!skipReasons.includes('TLS version / cipher enumeration is not supported')) skipReasons.push('TLS version / cipher enumeration is not supported');
    ctx.warn('TLS version / cipher enumeration is not supported; this request block is skipped', [...segs, key], true);
  }
  const address = ctx.str(raw, 'address', segs);
  if (address === undefined || address.trim() === '') ctx.error('an ssl request needs \'address\' (usually "{{Host}}:{{Port}}")', segs);
  const minVersion = version(ctx, raw, 'min_version', segs, skipReasons);
  const maxVersion = version(ctx, raw, 'max_version', segs, skipReasons);
  const order = ['sslv3', 'tls10', 'tls11', 'tls12', 'tls13'];
  if (minVersion && maxVersion && order.indexOf(minVersion) > order.indexOf(maxVersion)) {
    ctx.error(`min_version ${minVersion} is above max_version ${maxVersion}`, [...segs, 'min_version']);
  }

  const cipherSuites = ctx.strList(raw, 'cipher_suites', segs, true) ?? [];
  const unknownSuites = cipherSuites.filter((name) => !openSslCipherName(name));
  if (unknownSuites.length) {
    skipReasons.push(`cipher suites node:tls cannot offer: ${unknownSuites.join(', ')}`);
    ctx.warn(
      `cipher suite${unknownSuites.length > 1 ? 's' : ''} ${unknownSuites.join(', ')} cannot be offered with node:tls (OpenSSL); this request block is skipped`,
      [...segs, 'cipher_suites'],
    );
  }

  const scanMode = ctx.str(raw, 'scan_mode', segs)?.trim().toLowerCase();
  if (scanMode && !SCAN_MODES.includes(scanMode))
    ctx.error(`unknown scan_mode ${JSON.stringify(scanMode)} (expected auto, ctls, ztls or openssl)`, [...segs, 'scan_mode']);
  else if (scanMode === 'ztls') ctx.warn('scan_mode ztls (zcrypto) is not available; handshakes use node:tls (OpenSSL)', [...segs, 'scan_mode']);

  const { matchers, extractors } = parseOperatorLists(ctx, raw, segs);
  // nuclei's default extract part for ssl is the JSON `response` (MakeDefaultExtractFunc); matchers default to `body`
  if (Array.isArray(raw.extractors)) {
    for (const e of extractors) {
      const given = raw.extractors[e.index];
      if (isRecord(given) && (given.part === undefined || given.part === null || given.part === '')) e.part = 'response';
    }
  }
  for (const m of matchers) {
    const fields = [m.part, ...m.dsl.map((d) => d.source)].join(' ');
    for (const [field, why] of Object.entries(UNAVAILABLE_FIELDS)) {
      if (new RegExp(`\\b${field}\\b`).test(fields)) {
        m.unsupported = m.unsupported ? `${m.unsupported}; ${why}` : why;
        ctx.warn(`'${field}' is not available (${why}); this matcher cannot be evaluated`, pathToSegs(segs, m.index));
      }
    }
  }

  const provided = new Set([...SSL_INPUT_VARIABLES, ...templateVars, ...extractors.filter((e) => e.name).map((e) => e.name!)]);
  skipReasons.push(...checkSentText(ctx, skipReasons.length > 0, [address ?? ''], segs, provided, 'ssl'));

  return {
    path: pathString(segs),
    index,
    id: ctx.str(raw, 'id', segs)?.trim() || undefined,
    address: address ?? '',
    minVersion,
    maxVersion,
    cipherSuites,
    stopAtFirstMatch: ctx.bool(raw, 'stop-at-first-match', segs) ?? templateStop,
    matchersCondition: ctx.condition(raw, 'matchers-condition', segs),
    matchers,
    extractors,
    skip: skipReasons.length ? [...new Set(skipReasons)].join('; ') : undefined,
  };
}

function pathToSegs(segs: Seg[], matcherIndex: number): Seg[] {
  return [...segs, 'matchers', matcherIndex];
}

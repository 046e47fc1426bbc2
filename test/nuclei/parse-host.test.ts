/** Parsing `dns:` and `ssl:` blocks: real templates from the public library (trimmed), defaults, errors and warnings with paths. */
import { describe, expect, it } from 'vitest';
import { parseDsl, parseTemplate } from '../../src/scanner/nuclei/index.js';

const header = (id: string) => `id: ${id}\ninfo:\n  name: ${id}\n  author: test\n  severity: info\n`;
const messages = (issues: Array<{ message: string; path: string }>) => issues.map((i) => `${i.path}: ${i.message}`);

describe('parseTemplate: dns', () => {
  it('loads txt-fingerprint-like templates with nuclei defaults (class IN, recursion, 3 retries, body part = raw)', () => {
    const r = parseTemplate(`${header('txt-fingerprint')}
dns:
  - name: "{{FQDN}}"
    type: TXT
    matchers:
      - type: regex
        regex:
          - "IN\\tTXT\\t(.+)"
    extractors:
      - type: regex
        group: 1
        regex:
          - "IN\\tTXT\\t(.+)"
`);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.template!.requests).toEqual([]);
    expect(r.template!.dns).toEqual([
      expect.objectContaining({ path: 'dns[0]', name: '{{FQDN}}', type: 'TXT', class: 'IN', recursion: true, retries: 3, skip: undefined }),
    ]);
    expect(r.template!.dns![0].matchers[0].part).toBe('raw');
    expect(r.template!.dns![0].extractors[0].part).toBe('raw');
  });

  it('reads class, recursion and retries', () => {
    const r = parseTemplate(`${header('opts')}
dns:
  - name: "version.bind"
    type: TXT
    class: chaos
    recursion: false
    retries: 5
    matchers:
      - type: word
        part: answer
        words: ["bind"]
`);
    expect(r.errors).toEqual([]);
    expect(r.template!.dns![0]).toMatchObject({ class: 'CH', recursion: false, retries: 5 });
    expect(r.template!.dns![0].matchers[0].part).toBe('answer');
  });

  it('rejects a missing name and an unknown type, with paths', () => {
    const r = parseTemplate(`${header('bad')}
dns:
  - type: AXFR
    matchers:
      - type: word
        words: ["x"]
`);
    expect(r.template).toBeUndefined();
    expect(messages(r.errors)).toEqual([
      'dns[0]: a dns request needs \'name\' (usually "{{FQDN}}")',
      'dns[0].type: unknown dns request type "AXFR" (expected one of A, NS, DS, CNAME, SOA, PTR, MX, TXT, AAAA, CAA, TLSA, ANY, SRV)',
    ]);
    expect(r.errors[1].line).toBe(8);
  });

  it('takes payloads (dkim-record-detect); skips blocks it cannot run faithfully: trace; ignores template resolvers', () => {
    const r = parseTemplate(`${header('dkim-record-detect')}
dns:
  - name: "{{selector}}._domainkey.{{FQDN}}"
    type: TXT
    payloads:
      selector:
        - default
        - google
    matchers:
      - type: word
        words: ["v=DKIM1"]
  - name: "{{FQDN}}"
    type: A
    trace: true
    resolvers: ["1.1.1.1"]
    matchers:
      - type: word
        words: ["x"]
`);
    expect(r.errors).toEqual([]);
    const [dkim, traced] = r.template!.dns!;
    expect(dkim.skip).toBeUndefined();
    expect(dkim.payloads).toEqual({ attack: 'batteringram', sets: [{ name: 'selector', values: ['default', 'google'] }] });
    expect(traced.skip).toContain('trace');
    expect(traced.resolvers).toEqual(['1.1.1.1']);
    expect(messages(r.warnings)).toEqual(
      expect.arrayContaining([
        'dns[1].trace: trace (iterative resolution from the root servers) is not supported; this request block is skipped',
        "dns[1].resolvers: 'resolvers' is ignored: questions go to the scanner's DNS servers (SCAN_DNS_SERVERS)",
      ]),
    );
  });

  it('warns about URL variables dns requests do not get, and accepts template variables', () => {
    const r = parseTemplate(`${header('vars')}
variables:
  sub: "_dmarc"
dns:
  - name: "{{sub}}.{{FQDN}}"
    type: TXT
    matchers: [{ type: word, words: ["v=DMARC1"] }]
  - name: "{{Hostname}}"
    type: A
    matchers: [{ type: word, words: ["x"] }]
`);
    expect(messages(r.warnings)).toEqual([
      'dns[1]: unknown variable {{Hostname}} in dns requests; requests using it are skipped unless an earlier request extracts it or the user gives a value',
    ]);
  });

  it('loads a word matcher without words (dns-saas-service-detection has one): it never matches, as in nuclei', () => {
    const r = parseTemplate(`${header('saas')}
dns:
  - name: "{{FQDN}}"
    type: CNAME
    matchers:
      - type: word
        part: answer
        name: adobe-marketo - 'mkto-.{5,8}\\.com'
      - type: word
        part: answer
        name: netlify
        words: ["netlify"]
`);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.template!.dns![0].matchers[0].words).toEqual([]);
  });

  it('warns when no block of the list can produce a finding, not for a feeder block', () => {
    const feeder = parseTemplate(`${header('wildcard-dns-detect')}
dns:
  - name: "{{randstr}}.{{FQDN}}"
    type: A
  - name: "{{randstr}}-{{randstr}}.{{FQDN}}"
    type: A
    matchers: [{ type: word, part: answer, words: ["IN\\tA\\t"] }]
`);
    expect(feeder.warnings).toEqual([]);
    const none = parseTemplate(`${header('nothing')}
dns:
  - name: "{{FQDN}}"
    type: A
`);
    expect(messages(none.warnings)).toEqual(['dns: no request has matchers or extractors; this template can never produce a finding']);
  });
});

describe('parseTemplate: ssl', () => {
  it('loads deprecated-tls: versions read, the SSLv3 block skipped with a warning', () => {
    const r = parseTemplate(`${header('deprecated-tls')}
ssl:
  - address: "{{Host}}:{{Port}}"
    min_version: tls11
    max_version: tls11
    extractors:
      - type: json
        name: tls_1.1
        json:
          - " .tls_version"
  - address: "{{Host}}:{{Port}}"
    min_version: ssl30
    max_version: ssl30
    extractors:
      - type: json
        name: ssl_3.0
        json:
          - " .tls_version"
`);
    expect(r.errors).toEqual([]);
    const [tls11, ssl3] = r.template!.ssl!;
    expect(tls11).toMatchObject({ address: '{{Host}}:{{Port}}', minVersion: 'tls11', maxVersion: 'tls11', skip: undefined });
    expect(tls11.extractors[0].part).toBe('response');
    expect(ssl3.skip).toContain('SSLv3');
    expect(messages(r.warnings)).toEqual([
      'ssl[1].min_version: SSLv3 handshakes are not possible with node:tls (OpenSSL 3 has no SSLv3); this request block is skipped',
    ]);
  });

  it('loads expired-ssl and self-signed-ssl without warnings; matchers keep part body (nuclei), extractors default to response', () => {
    const r = parseTemplate(`${header('expired-ssl')}
ssl:
  - address: "{{Host}}:{{Port}}"
    matchers:
      - type: dsl
        dsl:
          - "expired == true"
      - type: word
        words: ["x"]
    extractors:
      - type: kval
        kval:
          - "not_after"
      - type: regex
        part: issuer_cn
        regex: ["(.+)"]
`);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    const block = r.template!.ssl![0];
    expect(block.matchers[1].part).toBe('body');
    expect(block.extractors.map((e) => e.part)).toEqual(['response', 'issuer_cn']);
  });

  it('marks matchers on revoked unsupported (revoked-ssl-certificate) and skips enumeration blocks', () => {
    const r = parseTemplate(`${header('revoked-ssl-certificate')}
ssl:
  - address: "{{Host}}:{{Port}}"
    matchers:
      - type: dsl
        dsl:
          - "revoked == true"
  - address: "{{Host}}:{{Port}}"
    tls_version_enum: true
    extractors:
      - type: json
        json: [".version_enum[]"]
`);
    expect(r.errors).toEqual([]);
    expect(r.template!.ssl![0].matchers[0].unsupported).toContain('revocation');
    expect(r.template!.ssl![1].skip).toContain('enumeration');
    expect(messages(r.warnings)).toEqual([
      "ssl[0].matchers[0]: 'revoked' is not available (revocation (OCSP/CRL lookups) is not checked); this matcher cannot be evaluated",
      'ssl[1].tls_version_enum: TLS version / cipher enumeration is not supported; this request block is skipped',
    ]);
  });

  it('translates cipher suites node:tls knows and skips blocks asking for one it does not', () => {
    const r = parseTemplate(`${header('ciphers')}
ssl:
  - address: "{{Host}}:{{Port}}"
    cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]
    matchers: [{ type: dsl, dsl: ["cipher != ''"] }]
  - address: "{{Host}}:{{Port}}"
    cipher_suites: [TLS_KRB5_WITH_IDEA_CBC_SHA]
    matchers: [{ type: dsl, dsl: ["cipher != ''"] }]
`);
    expect(r.errors).toEqual([]);
    expect(r.template!.ssl![0].skip).toBeUndefined();
    expect(r.template!.ssl![1].skip).toContain('TLS_KRB5_WITH_IDEA_CBC_SHA');
    expect(r.warnings.map((w) => w.path)).toEqual(['ssl[1].cipher_suites']);
  });

  it('rejects missing address, unknown versions and scan modes; warns on ztls', () => {
    const r = parseTemplate(`${header('bad-ssl')}
ssl:
  - min_version: tls14
    scan_mode: fast
    matchers: [{ type: dsl, dsl: ["expired"] }]
`);
    expect(r.template).toBeUndefined();
    expect(messages(r.errors)).toEqual([
      'ssl[0]: an ssl request needs \'address\' (usually "{{Host}}:{{Port}}")',
      'ssl[0].min_version: unknown TLS version "tls14" (expected sslv3, tls10, tls11, tls12 or tls13)',
      'ssl[0].scan_mode: unknown scan_mode "fast" (expected auto, ctls, ztls or openssl)',
    ]);
    const z = parseTemplate(`${header('ztls')}
ssl:
  - address: "{{Host}}:{{Port}}"
    scan_mode: ztls
    matchers: [{ type: dsl, dsl: ["expired == true"] }]
`);
    expect(messages(z.warnings)).toEqual(['ssl[0].scan_mode: scan_mode ztls (zcrypto) is not available; handshakes use node:tls (OpenSSL)']);
  });

  it('parses a top-level comma list as govaluate does ("tls_version, cipher")', () => {
    expect(parseDsl('tls_version, cipher').ast).toEqual({
      k: 'arr',
      items: [
        { k: 'var', name: 'tls_version' },
        { k: 'var', name: 'cipher' },
      ],
    });
  });

  it('warns that protocols of a mixed template run on their own', () => {
    const r = parseTemplate(`${header('mixed')}
dns:
  - name: "{{FQDN}}"
    type: A
    matchers: [{ type: word, words: ["x"] }]
ssl:
  - address: "{{Host}}:{{Port}}"
    matchers: [{ type: dsl, dsl: ["expired == true"] }]
`);
    expect(r.errors).toEqual([]);
    expect(r.template!.dns).toHaveLength(1);
    expect(r.template!.ssl).toHaveLength(1);
    expect(messages(r.warnings)).toEqual(['dns: blocks of several protocols (dns, ssl) run each on their own target; values do not flow between protocols']);
  });
});

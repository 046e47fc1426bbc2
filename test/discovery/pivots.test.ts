import { describe, expect, it } from 'vitest';
import { pivotNames } from '../../src/scanner/discovery/pivots.js';
import type { CertificateObservation, HostObservation, WebObservation } from '../../src/scanner/types.js';

function web(overrides: Partial<WebObservation>): WebObservation {
  return {
    kind: 'web',
    host: 'www.example.test',
    address: '127.0.0.1',
    port: 443,
    scheme: 'https',
    url: 'https://www.example.test/',
    finalUrl: 'https://www.example.test/',
    status: 200,
    headers: {},
    bodyExcerpt: '',
    bodyBytesRead: 0,
    bodyTruncated: false,
    bodySha256: '',
    redirectChain: [],
    technologies: [],
    responseTimeMs: 1,
    ...overrides,
  };
}

function certificate(overrides: Partial<CertificateObservation>): CertificateObservation {
  return {
    kind: 'certificate',
    host: 'www.example.test',
    address: '127.0.0.1',
    port: 443,
    subject: 'CN=www.example.test',
    sans: [],
    issuer: 'CN=Test CA',
    validFrom: '2025-01-01T00:00:00.000Z',
    validTo: '2026-01-01T00:00:00.000Z',
    serialNumber: '01',
    fingerprint256: 'AB:CD:EF',
    selfSigned: false,
    expired: false,
    notYetValid: false,
    daysUntilExpiry: 100,
    protocol: 'TLSv1.3',
    cipher: null,
    trusted: true,
    ...overrides,
  };
}

const names = (list: Array<{ name: string }>) => list.map((entry) => entry.name).sort();

describe('pivotNames: certificates', () => {
  it('takes DNS SANs and the subject CN, strips wildcards, drops IP addresses', () => {
    const cert = certificate({
      subjectCN: 'Portal.Example.test',
      sans: ['*.api.example.test', 'mail.example.test.', '192.0.2.7', '2001:db8::1', 'not a name'],
    });
    const found = pivotNames({ certificates: [cert] });
    expect(names(found)).toEqual(['api.example.test', 'mail.example.test', 'portal.example.test']);
    expect(found.every((entry) => entry.origin.source === 'certificate' && entry.origin.from === 'certificate:sha256:abcdef')).toBe(true);
  });
});

describe('pivotNames: CNAMEs', () => {
  it('takes every target of the chain, with the host as origin', () => {
    const host: HostObservation = {
      kind: 'host',
      host: 'shop.example.test',
      addresses: [],
      a: [],
      aaaa: [],
      cname: ['shop.edge.example.test', 'lb.cdn.test'],
      resolvedVia: 'dns',
      outOfScope: [],
    };
    expect(pivotNames({ hosts: [host] })).toEqual([
      { name: 'shop.edge.example.test', origin: { source: 'cname', from: 'host:shop.example.test' } },
      { name: 'lb.cdn.test', origin: { source: 'cname', from: 'host:shop.example.test' } },
    ]);
  });
});

describe('pivotNames: web pages', () => {
  it('takes hosts from redirects and the final URL', () => {
    const page = web({
      finalUrl: 'https://login.example.test/start',
      redirectChain: [
        { url: 'https://www.example.test/', status: 302, location: 'https://sso.example.test/auth' },
        { url: 'https://sso.example.test/auth', status: 302, location: 'https://login.example.test/start' },
        { url: 'https://login.example.test/start', status: 302, location: '/relative' },
      ],
    });
    const found = pivotNames({ web: [page] });
    expect(names(found)).toEqual(['login.example.test', 'sso.example.test']);
    expect(found[0]!.origin).toEqual({ source: 'link', from: 'web:https://www.example.test:443' });
  });

  it('reads href, src and action attributes: quoted or not, absolute or protocol-relative', () => {
    const body = [
      '<a href="https://docs.example.test/guide">docs</a>',
      "<img src='//static.example.test/logo.png'>",
      '<form action=https://forms.example.test/submit method=post>',
      '<script SRC = "HTTPS://CDN.Partner.test/app.js"></script>',
      '<a href="/about">relative</a>',
      '<a href="mailto:team@example.test">mail</a>',
      '<a href="javascript:void(0)">js</a>',
      '<a href="https://192.0.2.1/x">ip</a>',
      '<a href="https://[2001:db8::1]/x">ip6</a>',
      '<a href="https://www.example.test/self">self</a>',
      '<a href="https://intranet/x">single label</a>',
      '<a href="https://a.example.test/?x=1&amp;y=2">entity</a>',
    ].join('\n');
    expect(names(pivotNames({ web: [web({ bodyExcerpt: body })] }))).toEqual([
      'a.example.test',
      'cdn.partner.test',
      'docs.example.test',
      'forms.example.test',
      'static.example.test',
    ]);
  });

  it('reads Location, Link and Content-Security-Policy headers', () => {
    const page = web({
      headers: {
        location: 'https://moved.example.test/',
        link: '<https://preload.example.test/app.css>; rel=preload; as=style, </local.js>; rel=preload',
        'content-security-policy':
          "default-src 'self'; script-src 'nonce-abc' https://*.scripts.example.test:443 cdn.vendor.test data: blob:; img-src *; report-uri /csp-report",
      },
    });
    expect(names(pivotNames({ web: [page] }))).toEqual(['cdn.vendor.test', 'moved.example.test', 'preload.example.test', 'scripts.example.test']);
  });

  it('deduplicates per name and origin, but keeps one entry per origin', () => {
    const a = web({ bodyExcerpt: '<a href="https://x.example.test/">1</a><a href="https://x.example.test/2">2</a>' });
    const b = web({ host: 'other.example.test', url: 'https://other.example.test/', finalUrl: 'https://other.example.test/', bodyExcerpt: a.bodyExcerpt });
    const found = pivotNames({ web: [a, b] }).filter((entry) => entry.name === 'x.example.test');
    expect(found.map((entry) => entry.origin.from)).toEqual(['web:https://www.example.test:443', 'web:https://other.example.test:443']);
  });

  it('stays fast on hostile bodies (unclosed quotes, long runs)', () => {
    const hostile = `${'<a href="'.repeat(20_000)}${'x'.repeat(100_000)} ${'href= '.repeat(20_000)}`;
    const started = performance.now();
    pivotNames({ web: [web({ bodyExcerpt: hostile, headers: { 'content-security-policy': `script-src ${'a:'.repeat(50_000)}` } })] });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

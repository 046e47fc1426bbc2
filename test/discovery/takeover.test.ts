import { describe, expect, it } from 'vitest';
import { serviceForChain, takeoverFromResolution, takeoverFromWeb, UNCLAIMED_SERVICES } from '../../src/scanner/discovery/takeover.js';
import type { NameResolution } from '../../src/scanner/discovery/types.js';
import type { WebObservation } from '../../src/scanner/types.js';

const resolution = (overrides: Partial<NameResolution>): NameResolution => ({
  name: 'x.example.test',
  status: 'found',
  a: [],
  aaaa: [],
  cname: [],
  ...overrides,
});

function web(host: string, body: string): WebObservation {
  return {
    kind: 'web',
    host,
    address: '127.0.0.1',
    port: 443,
    scheme: 'https',
    url: `https://${host}/`,
    finalUrl: `https://${host}/`,
    status: 404,
    headers: {},
    bodyExcerpt: body,
    bodyBytesRead: body.length,
    bodyTruncated: false,
    bodySha256: '',
    redirectChain: [],
    technologies: [],
    responseTimeMs: 1,
  };
}

describe('UNCLAIMED_SERVICES', () => {
  it('is a small table where every entry can match something', () => {
    expect(UNCLAIMED_SERVICES.length).toBeGreaterThanOrEqual(10);
    expect(UNCLAIMED_SERVICES.length).toBeLessThanOrEqual(20);
    for (const entry of UNCLAIMED_SERVICES) {
      expect(entry.cnameSuffixes.length).toBeGreaterThan(0);
      expect(entry.fingerprints.length > 0 || entry.nxdomain === true).toBe(true);
    }
    // Not vulnerable by default: left out on purpose.
    expect(UNCLAIMED_SERVICES.some((entry) => entry.service.toLowerCase().includes('netlify'))).toBe(false);
  });

  it('matches chains by suffix, on label boundaries, and regional S3 endpoints', () => {
    expect(serviceForChain(['acme.github.io'])?.service).toBe('GitHub Pages');
    expect(serviceForChain(['shop.example.test', 'old-app.herokuapp.com.'])?.service).toBe('Heroku');
    expect(serviceForChain(['files.s3-website-us-east-1.amazonaws.com'])?.service).toBe('AWS S3');
    expect(serviceForChain(['files.s3.eu-west-1.amazonaws.com'])?.service).toBe('AWS S3');
    expect(serviceForChain(['files.s3.amazonaws.com'])?.service).toBe('AWS S3');
    expect(serviceForChain(['notgithub.io'])).toBeUndefined();
    expect(serviceForChain(['lb.elb.amazonaws.com'])).toBeUndefined();
    expect(serviceForChain([])).toBeUndefined();
  });
});

describe('takeoverFromResolution', () => {
  it('reports a CNAME chain ending in NXDOMAIN, with the service when known', () => {
    const candidate = takeoverFromResolution(resolution({ name: 'old.example.test', status: 'nxdomain', cname: ['gone-app.azurewebsites.net'] }));
    expect(candidate).toEqual({
      name: 'old.example.test',
      chain: ['gone-app.azurewebsites.net'],
      reason: 'dangling-cname',
      service: 'Microsoft Azure',
      evidence: 'CNAME chain ends in NXDOMAIN at gone-app.azurewebsites.net',
    });
  });

  it('reports a dangling chain to an unknown target without a service', () => {
    const candidate = takeoverFromResolution(resolution({ status: 'nxdomain', cname: ['a.example.test', 'b.unknown.test'] }));
    expect(candidate?.reason).toBe('dangling-cname');
    expect(candidate?.service).toBeUndefined();
    expect(candidate?.chain).toEqual(['a.example.test', 'b.unknown.test']);
  });

  it('ignores names that resolve, plain NXDOMAIN and errors', () => {
    expect(takeoverFromResolution(resolution({ status: 'found', a: ['192.0.2.1'], cname: ['x.github.io'] }))).toBeNull();
    expect(takeoverFromResolution(resolution({ status: 'nxdomain' }))).toBeNull();
    expect(takeoverFromResolution(resolution({ status: 'error', cname: ['x.github.io'], error: 'timeout' }))).toBeNull();
  });
});

describe('takeoverFromWeb', () => {
  it('reports a page with the service fingerprint behind a chain to that service', () => {
    const page = web('docs.example.test', "<html><body><h1>404</h1><p>There isn't a GitHub Pages site here.</p></body></html>");
    const candidate = takeoverFromWeb(page, ['acme.github.io']);
    expect(candidate).toMatchObject({ name: 'docs.example.test', chain: ['acme.github.io'], reason: 'unclaimed-service', service: 'GitHub Pages' });
    expect(candidate?.evidence).toContain("There isn't a GitHub Pages site here.");
  });

  it('matches the fingerprint case-insensitively', () => {
    expect(takeoverFromWeb(web('a.example.test', 'PROJECT NOT FOUND'), ['a.surge.sh'])?.service).toBe('Surge.sh');
  });

  it('needs both the chain and the fingerprint', () => {
    const body = "There isn't a GitHub Pages site here.";
    expect(takeoverFromWeb(web('a.example.test', body), [])).toBeNull();
    expect(takeoverFromWeb(web('a.example.test', body), ['a.herokuapp.com'])).toBeNull();
    expect(takeoverFromWeb(web('a.example.test', 'Welcome to our docs'), ['acme.github.io'])).toBeNull();
    // NXDOMAIN-only services have no page to recognise.
    expect(takeoverFromWeb(web('a.example.test', 'anything'), ['x.cloudapp.net'])).toBeNull();
  });
});

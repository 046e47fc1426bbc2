import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import https from 'node:https';
import { loadPack, type PackTemplate } from '../src/modules/templates/pack.js';
import { runTemplatesOnWeb, templateMatcher, TEMPLATE_OUTPUT_LIMITS, type TemplateScanResult } from '../src/scanner/nuclei/run-on-web.js';
import { parseTemplate } from '../src/scanner/nuclei/index.js';
import { locate, parseNucleiLine, toObservation } from '../src/modules/tools/normalize.js';
import { createScopeGuard, LOOPBACK_NETWORKS, type WebObservation } from '../src/scanner/index.js';
import { installTripwire, listen, makeCertificates, type TestCertificates, type Tripwire } from './scanner/helpers.js';

/**
 * The default pack, template by template, against loopback servers: each template has a site that exhibits
 * its issue (positive) and one that nearly does (negative), and every site is scanned with the WHOLE pack, so a
 * positive must raise exactly its own finding and nothing else may fire anywhere. Catch-all sites (200 for
 * every path, echoes, JSON, redirects to a login) must raise nothing but what they really lack.
 */

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
type Routes = Record<string, Handler>;

const HOME = '<!doctype html><html><head><title>Acme Shop</title></head><body><h1>Acme Shop</h1><p>Welcome.</p></body></html>';
const SECURITY_TXT = 'Contact: mailto:security@acme.example\nExpires: 2030-01-01T00:00:00.000Z\n';

const send =
  (status: number, body: string | Buffer, headers: Record<string, string | string[]> = {}): Handler =>
  (_req, res) =>
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(body);
const html = (body: string, status = 200, headers: Record<string, string | string[]> = {}) =>
  send(status, body, { 'content-type': 'text/html; charset=utf-8', ...headers });
const json = (value: unknown, status = 200, headers: Record<string, string> = {}) =>
  send(status, JSON.stringify(value), { 'content-type': 'application/json', ...headers });

/** A well-kept site: a home page, a security.txt, 404 for everything else. Positives add one route to it. */
const CLEAN: Routes = {
  '/': html(HOME),
  '/.well-known/security.txt': send(200, SECURITY_TXT),
};

interface Expected {
  matcher: string;
  extracted?: string[];
}

interface Case {
  name: string;
  routes: Routes;
  /** Replace the clean site instead of adding to it. */
  bare?: boolean;
  tls?: boolean;
  /** Findings of the whole pack on this site, by template id. */
  expect: Record<string, Expected[]>;
}

const zipBytes = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00]), Buffer.from('index.php'), Buffer.alloc(64, 0x9c)]);
const gzipBytes = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xed, 0xc1, 0x01, 0x0d, 0x00, 0x00]);
const dsStoreBytes = Buffer.concat([Buffer.from([0x00, 0x00, 0x00, 0x01, 0x42, 0x75, 0x64, 0x31, 0x00, 0x00, 0x10, 0x00]), Buffer.alloc(48, 0xa5)]);

const PHPINFO = (version: string) =>
  `<!DOCTYPE html><html><head><title>PHP ${version} - phpinfo()</title></head><body><div class="center"><table><tr class="h"><td><h1 class="p">PHP Version ${version}</h1></td></tr></table></div></body></html>`;
const SERVER_STATUS =
  '<!DOCTYPE HTML><html><head><title>Apache Status</title></head><body><h1>Apache Server Status for localhost (via 127.0.0.1)</h1><dl><dt>Server Version: Apache/2.4.57 (Debian) OpenSSL/3.0.11</dt><dt>Server MPM: event</dt></dl></body></html>';
const NGINX_STATUS = 'Active connections: 2 \nserver accepts handled requests\n 10 10 20 \nReading: 0 Writing: 1 Waiting: 1 \n';
const METRICS = '# HELP http_requests_total Total HTTP requests.\n# TYPE http_requests_total counter\nhttp_requests_total{code="200"} 1027\n';
const WP_LOGIN =
  '<!DOCTYPE html><html><head><title>Log In &lsaquo; Acme &#8212; WordPress</title><link rel="stylesheet" href="https://acme.example/wp-admin/load-styles.php?c=0&amp;dir=ltr&amp;load%5Bchunk_0%5D=dashicons,buttons&amp;ver=6.4.2" /></head><body class="login"><form name="loginform" id="loginform" action="/wp-login.php" method="post"><input type="text" name="log" id="user_login" /><input type="submit" name="wp-submit" id="wp-submit" value="Log In" /></form></body></html>';
const WP_README =
  '<!DOCTYPE html><html><head><title>WordPress &#8250; ReadMe</title></head><body><h1 id="logo"><a href="https://wordpress.org/"><img alt="WordPress" src="wp-admin/images/wordpress-logo.png" /></a><br /> Version 4.9.8</h1></body></html>';
const PMA =
  '<!DOCTYPE HTML><html lang="en"><head><title>phpMyAdmin</title></head><body><form method="post" name="login_form"><input type="text" name="pma_username" id="input_username" value="" /><input type="password" name="pma_password" id="input_password" /></form></body></html>';
const SWAGGER_UI =
  '<!DOCTYPE html><html><head><title>Swagger UI</title><link rel="stylesheet" href="./swagger-ui.css" /></head><body><div id="swagger-ui"></div><script src="./swagger-ui-bundle.js"></script><script>window.ui = SwaggerUIBundle({ url: "/v3/api-docs" })</script></body></html>';
const ES_ROOT = {
  name: 'node-1',
  cluster_name: 'logs',
  cluster_uuid: 'Yx2lqjQkQn6Uc4zN6M0M5A',
  version: { number: '8.11.1', build_flavor: 'default' },
  tagline: 'You Know, for Search',
};
const NGINX_DEFAULT = '<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome to nginx!</h1></body></html>';
const APACHE_DEFAULT = '<html><body><h1>It works!</h1></body></html>\n';
const IIS_DEFAULT =
  '<!DOCTYPE html><html><head><title>IIS Windows Server</title></head><body><div id="container"><a href="http://go.microsoft.com/fwlink/?linkid=66138"><img src="iisstart.png" alt="IIS" /></a></div></body></html>';

/** Redirects to the `param` value of the query, if present, from `path`. */
function redirectFrom(param: string, status = 302): Handler {
  return (req, res) => {
    const target = new URL(req.url ?? '/', 'http://x').searchParams.get(param);
    if (target) res.writeHead(status, { location: target }).end();
    else html(HOME)(req, res, '');
  };
}

const CASES: Case[] = [
  {
    name: 'exposed .env',
    routes: { '/.env': send(200, 'APP_NAME=shop\nAPP_ENV=production\nDB_PASSWORD=hunter2\nSTRIPE_SECRET=sk_live_123\n') },
    expect: { 'exposed-env-file': [{ matcher: '/.env', extracted: ['APP_NAME', 'APP_ENV', 'DB_PASSWORD', 'STRIPE_SECRET'] }] },
  },
  { name: '.env that is a page about .env files', routes: { '/.env': html('<html><body><pre>DB_PASSWORD=changeme</pre></body></html>') }, expect: {} },
  { name: '.env without secrets', routes: { '/.env': send(200, 'NODE_ENV=production\nPORT=3000\n') }, expect: {} },
  {
    name: 'exposed .git/config',
    routes: {
      '/.git/config': send(
        200,
        '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[remote "origin"]\n\turl = https://git.acme.example/shop.git\n',
      ),
    },
    expect: { 'exposed-git-config': [{ matcher: '/.git/config', extracted: ['https://git.acme.example/shop.git'] }] },
  },
  { name: '.git/config forbidden', routes: { '/.git/config': html('<html><body>403 Forbidden [core]</body></html>', 403) }, expect: {} },
  {
    name: 'exposed .DS_Store',
    routes: { '/.DS_Store': send(200, dsStoreBytes, { 'content-type': 'application/octet-stream' }) },
    expect: { 'exposed-ds-store': [{ matcher: '/.DS_Store' }] },
  },
  { name: '.DS_Store that is not one', routes: { '/.DS_Store': send(200, Buffer.from('Bud1 is the magic of .DS_Store files')) }, expect: {} },
  {
    name: 'backup.tar.gz downloadable',
    routes: { '/backup.tar.gz': send(200, gzipBytes, { 'content-type': 'application/gzip' }) },
    expect: { 'exposed-backup-archive': [{ matcher: '/backup.tar.gz' }] },
  },
  {
    name: 'site.zip downloadable',
    routes: { '/site.zip': send(200, zipBytes, { 'content-type': 'application/zip' }) },
    expect: { 'exposed-backup-archive': [{ matcher: '/site.zip' }] },
  },
  { name: 'backup.zip that is a download page', routes: { '/backup.zip': html('<html><body>Download our backup tool (PK inside)</body></html>') }, expect: {} },
  {
    name: 'SQL dump downloadable',
    routes: { '/backup.sql': send(200, '-- MySQL dump 10.13  Distrib 8.0.35\n--\nDROP TABLE IF EXISTS `users`;\nCREATE TABLE `users` (`id` int NOT NULL);\n') },
    expect: { 'exposed-sql-dump': [{ matcher: '/backup.sql' }] },
  },
  { name: 'dump.sql that is a tutorial', routes: { '/dump.sql': html('<html><body><pre>\nCREATE TABLE users (id int);\n</pre></body></html>') }, expect: {} },
  {
    name: 'phpinfo page',
    routes: { '/info.php': html(PHPINFO('8.2.12')) },
    expect: { 'phpinfo-exposed': [{ matcher: '/info.php', extracted: ['8.2.12'] }] },
  },
  {
    name: 'blog post about phpinfo()',
    routes: { '/phpinfo.php': html('<html><head><title>Using phpinfo() safely</title></head><body>PHP Version checks</body></html>') },
    expect: {},
  },
  {
    name: 'Apache server-status',
    routes: { '/server-status': html(SERVER_STATUS) },
    expect: { 'apache-server-status': [{ matcher: '/server-status', extracted: ['Apache/2.4.57 (Debian) OpenSSL/3.0.11'] }] },
  },
  {
    name: 'Apache server-status forbidden',
    routes: {
      '/server-status': html(
        "<html><head><title>403 Forbidden</title></head><body>You don't have permission to access /server-status. Apache Server Status for</body></html>",
        403,
      ),
    },
    expect: {},
  },
  { name: 'nginx stub_status', routes: { '/nginx_status': send(200, NGINX_STATUS) }, expect: { 'nginx-status-page': [{ matcher: '/nginx_status' }] } },
  {
    name: 'docs page about stub_status',
    routes: { '/nginx_status': html('<p>Active connections: 2 means two clients; server accepts handled requests</p>') },
    expect: {},
  },
  {
    name: 'Spring Boot actuator env',
    routes: {
      '/actuator/env': json({
        activeProfiles: ['prod'],
        propertySources: [{ name: 'systemEnvironment', properties: { DB_URL: { value: 'jdbc:postgresql://db/app' } } }],
      }),
    },
    expect: { 'spring-actuator-env': [{ matcher: '/actuator/env' }] },
  },
  { name: 'actuator env behind authentication', routes: { '/actuator/env': json({ error: 'Unauthorized', path: '/actuator/env' }, 401) }, expect: {} },
  {
    name: 'Spring Boot actuator health',
    routes: { '/actuator/health': json({ status: 'UP' }, 200, { 'content-type': 'application/vnd.spring-boot.actuator.v3+json' }) },
    expect: { 'spring-actuator-health': [{ matcher: '/actuator/health', extracted: ['UP'] }] },
  },
  { name: 'health that is not actuator', routes: { '/actuator/health': html('<html><body>{"status":"UP"}</body></html>') }, expect: {} },
  { name: 'Prometheus metrics', routes: { '/metrics': send(200, METRICS) }, expect: { 'prometheus-metrics-exposed': [{ matcher: '/metrics' }] } },
  { name: 'metrics documentation page', routes: { '/metrics': html(`<html><body><pre>\n${METRICS}</pre></body></html>`) }, expect: {} },
  {
    name: 'Docker registry catalog',
    routes: { '/v2/_catalog': json({ repositories: ['shop/api', 'shop/web'] }, 200, { 'docker-distribution-api-version': 'registry/2.0' }) },
    expect: { 'docker-registry-catalog': [{ matcher: '/v2/_catalog', extracted: ['shop/api', 'shop/web'] }] },
  },
  {
    name: 'Docker registry with authentication',
    routes: {
      '/v2/_catalog': json({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }, 401, {
        'docker-distribution-api-version': 'registry/2.0',
      }),
    },
    expect: {},
  },
  {
    name: 'Kubernetes API anonymous namespace list',
    routes: {
      '/api/v1/namespaces': json({
        kind: 'NamespaceList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '1' },
        items: [{ metadata: { name: 'default' } }, { metadata: { name: 'kube-system' } }],
      }),
    },
    expect: { 'kubernetes-api-anonymous': [{ matcher: '/api/v1/namespaces', extracted: ['default', 'kube-system'] }] },
  },
  {
    name: 'Kubernetes API refusing anonymous',
    routes: {
      '/api/v1/namespaces': json(
        {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces"',
          code: 403,
        },
        403,
      ),
    },
    expect: {},
  },
  {
    name: 'Elasticsearch open',
    routes: { '/': json(ES_ROOT) },
    expect: { 'elasticsearch-unauthenticated': [{ matcher: 'elasticsearch-unauthenticated', extracted: ['8.11.1'] }] },
  },
  {
    name: 'Elasticsearch with security',
    routes: { '/': json({ error: { root_cause: [{ type: 'security_exception', reason: 'missing authentication credentials' }] }, status: 401 }, 401) },
    expect: {},
  },
  {
    name: 'OpenAPI document',
    routes: { '/v3/api-docs': json({ openapi: '3.0.1', info: { title: 'Shop API', version: 'v1' }, paths: { '/orders': {} } }) },
    expect: { 'openapi-spec-exposed': [{ matcher: '/v3/api-docs', extracted: ['Shop API'] }] },
  },
  { name: 'openapi.json that is the SPA', routes: { '/openapi.json': html('<html><body>"openapi": "3.0" "paths"</body></html>', 404) }, expect: {} },
  { name: 'Swagger UI', routes: { '/swagger-ui/index.html': html(SWAGGER_UI) }, expect: { 'swagger-ui-exposed': [{ matcher: '/swagger-ui/index.html' }] } },
  {
    name: 'Swagger UI behind a login',
    routes: { '/swagger-ui.html': html('<html><body>Please sign in to see SwaggerUIBundle</body></html>', 401) },
    expect: {},
  },
  {
    name: 'GraphQL introspection enabled',
    routes: {
      '/graphql': (req, res, body) =>
        req.method === 'POST' && body.includes('__schema')
          ? json({ data: { __schema: { queryType: { name: 'Query' } } } })(req, res, body)
          : json({ errors: [{ message: 'bad request' }] }, 400)(req, res, body),
    },
    expect: { 'graphql-introspection-enabled': [{ matcher: '/graphql', extracted: ['Query'] }] },
  },
  {
    name: 'GraphQL introspection disabled',
    routes: { '/graphql': json({ errors: [{ message: 'GraphQL introspection is not allowed, but the query contained __schema or __type' }] }) },
    expect: {},
  },
  { name: 'nginx default page', routes: { '/': html(NGINX_DEFAULT) }, expect: { 'web-server-default-page': [{ matcher: 'nginx' }] } },
  { name: 'Apache default page', routes: { '/': html(APACHE_DEFAULT) }, expect: { 'web-server-default-page': [{ matcher: 'apache' }] } },
  { name: 'IIS default page', routes: { '/': html(IIS_DEFAULT) }, expect: { 'web-server-default-page': [{ matcher: 'iis' }] } },
  {
    name: 'a page that talks about nginx',
    routes: { '/': html('<html><head><title>We moved from Apache to nginx</title></head><body>It works! Welcome to nginx.</body></html>') },
    expect: {},
  },
  { name: 'open redirect', routes: { '/': redirectFrom('url') }, expect: { 'open-redirect': [{ matcher: 'open-redirect' }] } },
  { name: 'open redirect on /login', routes: { '/login': redirectFrom('next', 303) }, expect: { 'open-redirect': [{ matcher: '/login' }] } },
  {
    name: 'redirect that keeps to its own site',
    routes: {
      '/': (req, res) => {
        const next = new URL(req.url ?? '/', 'http://x').searchParams.get('next');
        if (next) res.writeHead(302, { location: `/login?next=${encodeURIComponent(next)}` }).end();
        else html(HOME)(req, res, '');
      },
      '/login': (_req, res) => res.writeHead(302, { location: `https://accounts.acme.example/?continue=https://evil.example/` }).end(),
    },
    expect: {},
  },
  {
    name: 'CORS reflecting any origin with credentials',
    routes: {
      '/': (req, res) =>
        html(HOME, 200, { 'access-control-allow-origin': String(req.headers.origin ?? ''), 'access-control-allow-credentials': 'true' })(req, res, ''),
    },
    expect: { 'cors-misconfiguration': [{ matcher: 'origin-reflected' }] },
  },
  {
    name: 'CORS wildcard with credentials',
    routes: { '/': html(HOME, 200, { 'access-control-allow-origin': '*', 'access-control-allow-credentials': 'true' }) },
    expect: { 'cors-misconfiguration': [{ matcher: 'wildcard-with-credentials' }] },
  },
  { name: 'CORS wildcard without credentials (public API)', routes: { '/': html(HOME, 200, { 'access-control-allow-origin': '*' }) }, expect: {} },
  {
    name: 'CORS for one known origin',
    routes: { '/': html(HOME, 200, { 'access-control-allow-origin': 'https://app.acme.example', 'access-control-allow-credentials': 'true' }) },
    expect: {},
  },
  {
    name: 'cookie without HttpOnly over HTTP',
    routes: { '/': html(HOME, 200, { 'set-cookie': 'sid=abc123; Path=/' }) },
    expect: { 'cookie-missing-security-flags': [{ matcher: 'missing-httponly', extracted: ['sid'] }] },
  },
  {
    name: 'cookies without Secure over HTTPS',
    tls: true,
    routes: { '/': html(HOME, 200, { 'set-cookie': ['sid=abc123; Path=/; HttpOnly', 'prefs=dark; Path=/; HttpOnly'] }) },
    expect: { 'cookie-missing-security-flags': [{ matcher: 'missing-secure', extracted: ['sid', 'prefs'] }] },
  },
  {
    name: 'cookie without either flag over HTTPS',
    tls: true,
    routes: { '/': html(HOME, 200, { 'set-cookie': 'sid=abc123' }) },
    expect: {
      'cookie-missing-security-flags': [
        { matcher: 'missing-httponly', extracted: ['sid'] },
        { matcher: 'missing-secure', extracted: ['sid'] },
      ],
    },
  },
  {
    name: 'cookie with both flags over HTTPS',
    tls: true,
    routes: { '/': html(HOME, 200, { 'set-cookie': 'sid=abc123; Path=/; Secure; HttpOnly; SameSite=Lax' }) },
    expect: {},
  },
  {
    name: 'robots.txt with disallowed paths',
    routes: { '/robots.txt': send(200, 'User-agent: *\nDisallow: /admin/\nDisallow: /backup/\nAllow: /\n') },
    expect: { 'robots-txt-disclosure': [{ matcher: '/robots.txt', extracted: ['/admin/', '/backup/'] }] },
  },
  { name: 'robots.txt that allows everything', routes: { '/robots.txt': send(200, 'User-agent: *\nDisallow:\n') }, expect: {} },
  { name: 'no security.txt', routes: { '/.well-known/security.txt': send(404, 'not found') }, expect: { 'security-txt-missing': [{ matcher: 'missing' }] } },
  {
    name: 'security.txt without a Contact field',
    routes: { '/.well-known/security.txt': send(200, 'Expires: 2030-01-01T00:00:00.000Z\n') },
    expect: { 'security-txt-missing': [{ matcher: 'missing' }] },
  },
  {
    name: 'security.txt reached through a redirect',
    routes: { '/.well-known/security.txt': (_req, res) => res.writeHead(301, { location: '/security.txt' }).end(), '/security.txt': send(200, SECURITY_TXT) },
    expect: {},
  },
  {
    name: 'WordPress login page',
    routes: { '/wp-login.php': html(WP_LOGIN) },
    expect: { 'wordpress-login-panel': [{ matcher: '/wp-login.php', extracted: ['6.4.2'] }] },
  },
  { name: 'another login page', routes: { '/wp-login.php': html('<html><body><form><input name="user_login"></form></body></html>') }, expect: {} },
  {
    name: 'WordPress readme.html',
    routes: { '/readme.html': html(WP_README) },
    expect: { 'wordpress-readme-version': [{ matcher: '/readme.html', extracted: ['4.9.8'] }] },
  },
  {
    name: 'a readme.html of something else',
    routes: { '/readme.html': html('<html><head><title>ReadMe</title></head><body>Version 1.0</body></html>') },
    expect: {},
  },
  {
    name: 'Jenkins open to anonymous users',
    routes: { '/api/json': json({ _class: 'hudson.model.Hudson', mode: 'NORMAL', jobs: [{ name: 'deploy' }] }, 200, { 'x-jenkins': '2.426.1' }) },
    expect: { 'jenkins-anonymous-access': [{ matcher: '/api/json', extracted: ['2.426.1'] }] },
  },
  {
    name: 'Jenkins asking for a login',
    routes: { '/api/json': html('<html><body>Authentication required "_class":"hudson.model.Hudson"</body></html>', 403, { 'x-jenkins': '2.426.1' }) },
    expect: {},
  },
  { name: 'phpMyAdmin login', routes: { '/phpmyadmin/': html(PMA) }, expect: { 'phpmyadmin-panel': [{ matcher: '/phpmyadmin/' }] } },
  {
    name: 'a phpMyAdmin tutorial',
    routes: { '/phpmyadmin/': html('<html><head><title>Installing phpMyAdmin</title></head><body>Step 1</body></html>') },
    expect: {},
  },
  {
    name: 'exposed .htpasswd',
    routes: { '/.htpasswd': send(200, 'admin:$apr1$Qx1l3b4c$3rZk1Yw2h1bY0nQv8e7c9/\ndeploy:$2y$05$abcdefghijklmnopqrstuu\n') },
    expect: { 'htpasswd-exposed': [{ matcher: '/.htpasswd', extracted: ['admin', 'deploy'] }] },
  },
  { name: '.htpasswd forbidden', routes: { '/.htpasswd': html('<html><body>Forbidden admin:$apr1$x</body></html>', 403) }, expect: {} },
  {
    name: 'crossdomain.xml for every domain',
    routes: {
      '/crossdomain.xml': send(200, '<?xml version="1.0"?>\n<cross-domain-policy>\n  <allow-access-from domain="*" />\n</cross-domain-policy>\n', {
        'content-type': 'text/xml',
      }),
    },
    expect: { 'crossdomain-xml-wildcard': [{ matcher: '/crossdomain.xml' }] },
  },
  {
    name: 'crossdomain.xml for its own domains',
    routes: {
      '/crossdomain.xml': send(200, '<cross-domain-policy><allow-access-from domain="*.acme.example" /></cross-domain-policy>', { 'content-type': 'text/xml' }),
    },
    expect: {},
  },
];

/** Sites that answer everything: status and generic words prove nothing there. */
const CATCH_ALLS: Case[] = [
  {
    name: 'single-page app: 200 and the same page for every path',
    bare: true,
    routes: { '*': html('<!doctype html><html><head><title>App</title></head><body><div id="root"></div><script src="/main.js"></script></body></html>') },
    expect: {},
  },
  {
    name: 'echo: 200 and the path and query in the page',
    bare: true,
    routes: {
      '*': (req, res) =>
        html(`<html><body><h1>Page not found</h1><p>${req.method} ${req.url} (Origin ${req.headers.origin ?? '-'})</p></body></html>`)(req, res, ''),
    },
    expect: {},
  },
  { name: 'plain text OK for every path', bare: true, routes: { '*': send(200, 'OK\n') }, expect: {} },
  {
    name: 'JSON for every path',
    bare: true,
    routes: { '*': (req, res) => json({ status: 'ok', path: req.url, repositories: 'none' })(req, res, '') },
    expect: {},
  },
  {
    name: 'redirect to a login page for every path',
    bare: true,
    routes: {
      '/login': html('<html><head><title>Sign in</title></head><body><form><input name="user_login"></form></body></html>'),
      '*': (req, res) => res.writeHead(302, { location: `/login?next=${encodeURIComponent(req.url ?? '/')}` }).end(),
    },
    expect: {},
  },
  {
    name: 'HTTPS single-page app',
    bare: true,
    tls: true,
    routes: { '*': html('<!doctype html><html><body><div id="app"></div></body></html>', 200, { 'strict-transport-security': 'max-age=31536000' }) },
    expect: {},
  },
];
// None of them publishes a security.txt: that finding, and only that one, is right for each.
for (const site of CATCH_ALLS) site.expect = { 'security-txt-missing': [{ matcher: 'missing' }] };

// ---------------------------------------------------------------------------------------------

let certs: TestCertificates;
let tripwire: Tripwire;
let pack: PackTemplate[];
let current: { routes: Routes; bare: boolean } = { routes: {}, bare: false };
let plain: { port: number; close(): Promise<void> };
let secure: { port: number; close(): Promise<void> };
const guard = createScopeGuard({ allowedNetworks: LOOPBACK_NETWORKS });

function dispatch(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const routes = current.bare ? current.routes : { ...CLEAN, ...current.routes };
    const route = routes[path] ?? routes['*'];
    if (route) route(req, res, Buffer.concat(chunks).toString('utf8'));
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
  });
}

beforeAll(async () => {
  tripwire = installTripwire();
  certs = makeCertificates();
  pack = await loadPack();
  plain = await listen(http.createServer(dispatch));
  secure = await listen(https.createServer({ key: certs.selfSigned.key, cert: certs.selfSigned.cert }, dispatch));
});

afterAll(async () => {
  await plain?.close();
  await secure?.close();
  certs?.cleanup();
  tripwire?.restore();
});

function webOf(tls: boolean): WebObservation {
  const port = tls ? secure.port : plain.port;
  const scheme = tls ? 'https' : 'http';
  const url = `${scheme}://127.0.0.1:${port}/`;
  return {
    kind: 'web',
    host: '127.0.0.1',
    address: '127.0.0.1',
    port,
    scheme,
    url,
    finalUrl: url,
    status: 200,
    headers: {},
    bodyExcerpt: '',
    bodyBytesRead: 0,
    bodyTruncated: false,
    bodySha256: '',
    redirectChain: [],
    technologies: [],
    responseTimeMs: 1,
  };
}

async function scanSite(site: Case): Promise<TemplateScanResult> {
  current = { routes: site.routes, bare: site.bare ?? false };
  return runTemplatesOnWeb(pack, [webOf(site.tls ?? false)], { guard, timeoutMs: 5_000 });
}

function summary(result: TemplateScanResult): Record<string, Expected[]> {
  const out: Record<string, Expected[]> = {};
  for (const finding of result.findings) {
    const extracted = finding.evidence.extracted?.['extracted-results'] as string[] | undefined;
    out[finding.checkId] ??= [];
    out[finding.checkId].push({ matcher: finding.matcher, ...(extracted ? { extracted } : {}) });
  }
  return out;
}

function expected(site: Case): Record<string, Expected[]> {
  const out = structuredClone(site.expect);
  for (const list of Object.values(out)) for (const entry of list) if (!entry.extracted) delete entry.extracted;
  return out;
}

describe('the default pack', () => {
  it('has at least 20 templates, each valid without warnings, named after its id', () => {
    expect(pack.length).toBeGreaterThanOrEqual(20);
    for (const entry of pack) {
      expect(entry.warnings, entry.fileName).toEqual([]);
      expect(entry.fileName).toBe(`${entry.template.id}.yaml`);
      expect(entry.template.info.description, entry.fileName).toBeTruthy();
      expect(entry.template.info.remediation, entry.fileName).toBeTruthy();
    }
  });

  it('every template has a positive and a negative case below', () => {
    const positives = new Set(CASES.flatMap((site) => Object.keys(site.expect)));
    const negatives = CASES.filter((site) => Object.keys(site.expect).length === 0).length;
    expect([...positives].sort()).toEqual(pack.map((entry) => entry.template.id).sort());
    expect(negatives).toBeGreaterThanOrEqual(pack.length - 1); // security.txt's negative is the clean site itself
  });

  it('raises nothing on a well-kept site', async () => {
    const result = await scanSite({ name: 'clean', routes: {}, expect: {} });
    expect(result.errors).toEqual([]);
    expect(result.findings).toEqual([]);
    expect(result.checkIds).toEqual(pack.map((entry) => entry.template.id).sort());
    expect(result.summary).toMatchObject({ templates: pack.length, endpoints: 1, requestsFailed: 0, truncated: 0 });
  });

  describe.each(CASES.map((site) => [site.name, site] as const))('%s', (_name, site) => {
    it(Object.keys(site.expect).length ? `raises exactly ${Object.keys(site.expect).join(', ')}` : 'raises nothing', async () => {
      const result = await scanSite(site);
      expect(result.errors).toEqual([]);
      expect(summary(result)).toEqual(expected(site));
    });
  });

  describe.each(CATCH_ALLS.map((site) => [site.name, site] as const))('catch-all: %s', (_name, site) => {
    it('raises only the missing security.txt', async () => {
      const result = await scanSite(site);
      expect(result.errors).toEqual([]);
      expect(summary(result)).toEqual(expected(site));
    });
  });
});

describe('template findings', () => {
  it('carry the template id, name, severity, matcher, extracted results, matched URL, classification and remediation', async () => {
    const result = await scanSite(CASES.find((site) => site.name === 'exposed .env')!);
    expect(result.findings).toHaveLength(1);
    const [finding] = result.findings;
    const web = webOf(false);
    expect(finding).toMatchObject({
      kind: 'finding',
      checkId: 'exposed-env-file',
      name: 'Exposed .env file',
      severity: 'high',
      source: 'nuclei',
      matcher: '/.env',
      asset: { type: 'web', key: `web:http://127.0.0.1:${web.port}`, host: '127.0.0.1', address: '127.0.0.1', port: web.port },
      fingerprintParts: ['exposed-env-file', `web:http://127.0.0.1:${web.port}`, '/.env'],
      classification: { cweId: ['CWE-538'], cvssScore: 7.5, cvssMetrics: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N' },
    });
    expect(finding!.description).toContain('.env file is served');
    expect(finding!.remediation).toContain('rotate every secret');
    expect(finding!.evidence.url).toBe(`http://127.0.0.1:${web.port}/.env`);
    expect(finding!.evidence.request).toMatch(/^GET \/\.env HTTP\/1\.1\r\n/);
    expect(finding!.evidence.response).toContain('DB_PASSWORD=hunter2');
    expect(finding!.evidence.extracted).toMatchObject({ type: 'http', 'extracted-results': ['APP_NAME', 'APP_ENV', 'DB_PASSWORD', 'STRIPE_SECRET'] });
  });

  it('dedupe with the same result pushed as nuclei -jsonl: same check id, asset and matcher', async () => {
    for (const name of ['exposed .env', 'CORS reflecting any origin with credentials', 'Elasticsearch open', 'open redirect', 'OpenAPI document']) {
      const site = CASES.find((candidate) => candidate.name === name)!;
      const result = await scanSite(site);
      expect(result.findings.length, name).toBeGreaterThan(0);
      for (const finding of result.findings) {
        // What nuclei -jsonl prints for that result (the fields the tools module reads).
        const extractedResults = finding.evidence.extracted?.['extracted-results'];
        const line = JSON.stringify({
          'template-id': finding.checkId,
          info: { name: finding.name, severity: finding.severity },
          type: 'http',
          host: finding.evidence.url,
          'matched-at': finding.evidence.url,
          ip: '127.0.0.1',
          ...(finding.evidence.extracted?.['matcher-name'] ? { 'matcher-name': finding.evidence.extracted['matcher-name'] } : {}),
          ...(finding.evidence.extracted?.['extractor-name'] ? { 'extractor-name': finding.evidence.extracted['extractor-name'] } : {}),
          ...(extractedResults ? { 'extracted-results': extractedResults } : {}),
        });
        const parsed = parseNucleiLine(line);
        if (parsed.kind !== 'finding') throw new Error('expected a finding');
        const pushed = toObservation(parsed.finding, locate(parsed.finding.location, 'nuclei'), 'nuclei');
        expect(pushed.fingerprintParts, name).toEqual(finding.fingerprintParts);
      }
    }
  });

  it('name the matched path unless a matcher or extractor is named (the tools module rule)', () => {
    const base = { templateId: 't', matchedUrl: 'http://h:1/a/b?x=1' };
    expect(templateMatcher({ ...base, matcherName: 'm', extractorName: 'e' })).toBe('m');
    expect(templateMatcher({ ...base, extractorName: 'e' })).toBe('e');
    expect(templateMatcher(base)).toBe('/a/b');
    expect(templateMatcher({ ...base, matchedUrl: 'http://h:1/?next=x' })).toBe('t');
  });

  it('report a template whose requests get no answer as an error of that template and endpoint, never as a finding', async () => {
    const closed = await listen(http.createServer());
    const port = closed.port;
    await closed.close();
    const url = `http://127.0.0.1:${port}/`;
    const result = await runTemplatesOnWeb(pack, [{ ...webOf(false), port, url, finalUrl: url }], { guard, timeoutMs: 2_000 });
    expect(result.findings).toEqual([]);
    expect(result.errors.map((error) => error.target).sort()).toEqual(pack.map((entry) => `${entry.template.id} web:http://127.0.0.1:${port}`).sort());
    expect(result.errors.every((error) => error.code === 'TEMPLATE_REQUEST_FAILED')).toBe(true);
  });

  it('are bounded per template and endpoint; a truncated pair is an error (so nothing of it gets fixed)', async () => {
    const paths = Array.from({ length: 25 }, (_, i) => `      - "{{BaseURL}}/many/${i}"`).join('\n');
    const { template } = parseTemplate(
      `id: many-results\ninfo:\n  name: Many\n  severity: info\nhttp:\n  - method: GET\n    path:\n${paths}\n    matchers:\n      - type: status\n        status: [404]\n`,
    );
    current = { routes: {}, bare: false };
    const result = await runTemplatesOnWeb([{ template: template! }], [webOf(false)], { guard });
    expect(result.findings).toHaveLength(TEMPLATE_OUTPUT_LIMITS.resultsPerTemplateAndEndpoint);
    expect(result.summary.truncated).toBe(25 - TEMPLATE_OUTPUT_LIMITS.resultsPerTemplateAndEndpoint);
    expect(result.errors).toEqual([
      { code: 'TEMPLATE_RESULTS_TRUNCATED', message: expect.any(String), target: `many-results web:http://127.0.0.1:${plain.port}` },
    ]);
  });

  it('stop a payload attack at maxRequestsPerTemplate, counted at the server, with an error and no finding it did not see', async () => {
    const { template, errors } = parseTemplate(`id: default-login-flood
info:
  name: Default login
  severity: high
http:
  - raw:
      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}
        Content-Type: application/x-www-form-urlencoded

        user={{user}}&pass={{pass}}
    attack: clusterbomb
    payloads:
      user: [root, admin]
      pass: [a, b, c, s3cret]
    stop-at-first-match: true
    matchers:
      - type: status
        status: [302]
`);
    expect(errors).toEqual([]);
    const attempts: string[] = [];
    current = {
      bare: true,
      routes: {
        '/login': (_req, res, body) => {
          attempts.push(body);
          res.writeHead(body === 'user=admin&pass=s3cret' ? 302 : 200, { location: '/home' }).end('ok');
        },
      },
    };
    const capped = await runTemplatesOnWeb([{ template: template! }], [webOf(false)], { guard, maxRequestsPerTemplate: 5 });
    expect(attempts).toHaveLength(5);
    expect(capped.findings).toEqual([]);
    expect(capped.errors).toEqual([
      {
        code: 'TEMPLATE_REQUEST_CAP_REACHED',
        message: expect.stringContaining('maxRequestsPerTemplatePerEndpoint'),
        target: `default-login-flood web:http://127.0.0.1:${plain.port}`,
      },
    ]);
    attempts.length = 0;
    const enough = await runTemplatesOnWeb([{ template: template! }], [webOf(false)], { guard, maxRequestsPerTemplate: 100 });
    // the 8th pair works; stop-at-first-match ends the attack there
    expect(attempts).toHaveLength(8);
    expect(enough.errors).toEqual([]);
    expect(enough.findings.map((finding) => finding.checkId)).toEqual(['default-login-flood']);
  });

  it('send a request many templates make once per endpoint when clustering is on', async () => {
    current = { routes: {}, bare: false };
    const on = await runTemplatesOnWeb(pack, [webOf(false)], { guard, cluster: true });
    const off = await runTemplatesOnWeb(pack, [webOf(false)], { guard, cluster: false });
    expect(on.findings).toEqual(off.findings);
    expect(on.summary.requestsSaved).toBeGreaterThan(0);
    expect(on.summary.requestsSent + on.summary.requestsSaved).toBe(off.summary.requestsSent);
  });

  it('refuse endpoints out of scope and redirects that leave it', async () => {
    const strict = createScopeGuard({ allowedNetworks: [] });
    const result = await runTemplatesOnWeb(pack, [webOf(false)], { guard: strict, timeoutMs: 2_000 });
    expect(result.findings).toEqual([]);
    expect(result.errors).toHaveLength(pack.length);
    expect(result.errors[0]!.message).toMatch(/out of scan scope/);
    expect(tripwire.attempts.every((attempt) => attempt.startsWith('127.0.0.1:'))).toBe(true);
  });
});

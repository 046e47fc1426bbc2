/**
 * Technology fingerprints from HTTP headers and body.
 *
 * A small table rather than a full Wappalyzer port: enough to tell an operator what runs where and
 * which versions are disclosed. Each rule matches one header (or cookie names, or the body); when
 * its pattern has a capture group, that group is the version.
 */
import type { DetectedTechnology } from './types.js';

interface TechnologyRule {
  name: string;
  /** `header:<name>` (lower-case), `cookie` (Set-Cookie names) or `body`. */
  source: string;
  pattern: RegExp;
}

const VERSION = String.raw`(\d+(?:\.\d+)+[a-z0-9]*)`;

const RULES: readonly TechnologyRule[] = [
  { name: 'nginx', source: 'header:server', pattern: new RegExp(String.raw`\bnginx(?:/${VERSION})?`, 'i') },
  { name: 'OpenResty', source: 'header:server', pattern: new RegExp(String.raw`\bopenresty(?:/${VERSION})?`, 'i') },
  { name: 'Apache HTTP Server', source: 'header:server', pattern: new RegExp(String.raw`\bApache(?!-Coyote)(?:/${VERSION})?`, 'i') },
  { name: 'Apache Tomcat', source: 'header:server', pattern: /\bApache-Coyote\b/i },
  { name: 'Microsoft IIS', source: 'header:server', pattern: new RegExp(String.raw`\bMicrosoft-IIS(?:/${VERSION})?`, 'i') },
  { name: 'LiteSpeed', source: 'header:server', pattern: /\bLiteSpeed\b/i },
  { name: 'Caddy', source: 'header:server', pattern: /\bCaddy\b/i },
  { name: 'Jetty', source: 'header:server', pattern: new RegExp(String.raw`\bJetty(?:\(${VERSION})?`, 'i') },
  { name: 'Cloudflare', source: 'header:server', pattern: /^cloudflare$/i },
  { name: 'Cloudflare', source: 'header:cf-ray', pattern: /./ },
  { name: 'Amazon CloudFront', source: 'header:x-amz-cf-id', pattern: /./ },
  { name: 'Vercel', source: 'header:x-vercel-id', pattern: /./ },
  { name: 'Express', source: 'header:x-powered-by', pattern: /\bExpress\b/i },
  { name: 'PHP', source: 'header:x-powered-by', pattern: new RegExp(String.raw`\bPHP(?:/${VERSION})?`, 'i') },
  { name: 'PHP', source: 'cookie', pattern: /^PHPSESSID$/ },
  { name: 'ASP.NET', source: 'header:x-powered-by', pattern: /\bASP\.NET\b/i },
  { name: 'ASP.NET', source: 'header:x-aspnet-version', pattern: new RegExp(VERSION) },
  { name: 'Java Servlet', source: 'cookie', pattern: /^JSESSIONID$/ },
  { name: 'Next.js', source: 'header:x-powered-by', pattern: new RegExp(String.raw`\bNext\.js(?: ${VERSION})?`, 'i') },
  { name: 'Next.js', source: 'body', pattern: /\/_next\/static\/|<script id="__NEXT_DATA__"/ },
  { name: 'WordPress', source: 'body', pattern: new RegExp(String.raw`<meta name="generator" content="WordPress ${VERSION}`, 'i') },
  { name: 'WordPress', source: 'body', pattern: /\/wp-(?:content|includes)\// },
  { name: 'Drupal', source: 'header:x-generator', pattern: new RegExp(String.raw`\bDrupal(?: ${VERSION})?`, 'i') },
  { name: 'Drupal', source: 'header:x-drupal-cache', pattern: /./ },
  { name: 'Joomla', source: 'body', pattern: /<meta name="generator" content="Joomla!/i },
  { name: 'React', source: 'body', pattern: /data-reactroot|\breact(?:-dom)?(?:\.production)?(?:\.min)?\.js\b/i },
  { name: 'Vue.js', source: 'body', pattern: /\bdata-v-[0-9a-f]{8}\b|\bvue(?:\.runtime)?(?:\.global)?(?:\.prod)?(?:\.min)?\.js\b/i },
  { name: 'Angular', source: 'body', pattern: new RegExp(String.raw`\bng-version="${VERSION}"`) },
  { name: 'jQuery', source: 'body', pattern: new RegExp(String.raw`\bjquery(?:[.-]${VERSION})?(?:\.slim)?(?:\.min)?\.js\b`, 'i') },
  { name: 'Bootstrap', source: 'body', pattern: new RegExp(String.raw`\bbootstrap(?:[.-]${VERSION})?(?:\.bundle)?(?:\.min)?\.(?:css|js)\b`, 'i') },
];

export interface TechnologyInput {
  /** Lower-case header names; Set-Cookie lines separated by newlines. */
  headers: Record<string, string>;
  body: string;
}

/** Detected technologies, one per name; a match that carries a version wins over one that does not. */
export function detectTechnologies(input: TechnologyInput): DetectedTechnology[] {
  const found = new Map<string, DetectedTechnology>();
  const cookieNames = (input.headers['set-cookie'] ?? '')
    .split('\n')
    .map((line) => line.split('=')[0].trim())
    .filter(Boolean);
  for (const rule of RULES) {
    const haystacks = rule.source === 'body' ? [input.body] : rule.source === 'cookie' ? cookieNames : [input.headers[rule.source.slice('header:'.length)]];
    for (const text of haystacks) {
      if (text === undefined) continue;
      const match = rule.pattern.exec(text);
      if (!match) continue;
      const previous = found.get(rule.name);
      const version = match[1];
      if (!previous || (!previous.version && version)) {
        found.set(rule.name, version ? { name: rule.name, version, evidence: rule.source } : { name: rule.name, evidence: rule.source });
      }
    }
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Directory listings expose every file in a folder, including ones never linked (backups, dumps,
 * config). We look at the probed page, at directory links it contains, and at a few folder names
 * that are commonly left listable; a page counts only if it carries a listing generator's markers.
 */
import { requestExcerpt, responseExcerpt } from './evidence.js';
import type { WebCheck } from './check.js';

/** Titles/headings the usual servers put on generated listings (Apache, nginx, lighttpd, Python, Tomcat, IIS). */
const LISTING_MARKERS = [/<title>\s*Index of \//i, /<h1>\s*Index of \//i, /<title>\s*Directory listing for \//i, /\[To Parent Directory\]/i];
const COMMON_DIRECTORIES = ['/files/', '/uploads/', '/backup/', '/static/', '/images/'];
/** Extra requests per endpoint, at most: enough to find the usual suspects, too few to be a crawl. */
const MAX_PROBED_DIRECTORIES = 8;

export const httpDirectoryListing: WebCheck = {
  id: 'http-directory-listing',
  name: 'Directory listing enabled',
  severity: 'medium',
  appliesTo: 'web',
  description:
    "The web server generates a listing of a directory's contents, exposing files that were never meant to be linked, such as backups, archives and configuration files.",
  remediation: 'Disable automatic indexes (nginx: autoindex off; Apache: Options -Indexes) and remove files that should not be public.',
  async run(ctx) {
    const { web } = ctx;
    const results = [];
    const origin = new URL(web.url).origin;
    const finalUrl = new URL(web.finalUrl);
    const seen = new Set<string>();

    if (finalUrl.origin === origin && isListing(web.bodyExcerpt)) {
      seen.add(finalUrl.pathname);
      results.push(listingResult(finalUrl.pathname, web.finalUrl, undefined, web.bodyExcerpt));
    }
    const candidates = [...linkedDirectories(web.bodyExcerpt, web.finalUrl, origin), ...COMMON_DIRECTORIES]
      .filter((path) => !seen.has(path) && (seen.add(path), true))
      .slice(0, MAX_PROBED_DIRECTORIES);
    for (const path of candidates) {
      const response = await ctx.fetchPath(path, { maxBodyBytes: 16 * 1024 });
      if (response.status === 200 && isListing(response.body)) {
        results.push(listingResult(path, response.url, responseExcerpt(response, 400), response.body));
      }
    }
    return results;
  },
};

function isListing(body: string): boolean {
  return LISTING_MARKERS.some((marker) => marker.test(body));
}

function listingResult(path: string, url: string, response: string | undefined, body: string) {
  const entries = [...body.matchAll(/<a\s[^>]*href="([^"?#]+)"/gi)]
    .map((m) => m[1])
    .filter((href) => href !== '../' && !href.startsWith('/') && !href.includes('://'))
    .slice(0, 20);
  return {
    matcher: path,
    evidence: {
      url,
      request: requestExcerpt('GET', url),
      ...(response ? { response } : {}),
      extracted: { path, entries },
    },
  };
}

/** Same-origin links on the page that end in `/` (folders), as paths. */
function linkedDirectories(body: string, baseUrl: string, origin: string): string[] {
  const paths: string[] = [];
  for (const match of body.matchAll(/<a\s[^>]*href="([^"#?]+\/)"/gi)) {
    try {
      const url = new URL(match[1], baseUrl);
      if (url.origin === origin && url.pathname !== '/') paths.push(url.pathname);
    } catch {
      // not a URL we can follow
    }
  }
  return paths;
}

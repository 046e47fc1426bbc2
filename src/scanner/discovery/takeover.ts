/**
 * Subdomain takeover candidates: a CNAME that points at nothing, or at a hosted service that says
 * the resource behind it is unclaimed (anyone could claim it and serve content on our name).
 *
 * The service table follows the public can-i-take-over-xyz knowledge base
 * (github.com/EdOverflow/can-i-take-over-xyz, fingerprints.json). Services listed there as
 * "Not vulnerable" (Netlify, Fastly, Zendesk, Vercel ...) are left out: reporting them would be noise.
 * "Edge case" services are kept and marked, because the takeover depends on details we cannot see.
 */
import type { WebObservation } from '../types.js';
import type { NameResolution, TakeoverCandidate } from './types.js';

export interface UnclaimedService {
  service: string;
  /** A CNAME hop equal to or under one of these points at the service. */
  cnameSuffixes: readonly string[];
  /** Extra hop patterns for names a suffix cannot express (regional endpoints). Anchored, no nested quantifiers. */
  cnamePattern?: RegExp;
  /** Body text of the service's "nothing here" page (matched case-insensitively); none for NXDOMAIN-only services. */
  fingerprints: readonly string[];
  /** The unclaimed resource's name does not resolve at all (NXDOMAIN at the end of the chain). */
  nxdomain?: boolean;
  /** `edge-case`: claimable only under conditions (plan, verification) we cannot check from outside. */
  status: 'vulnerable' | 'edge-case';
}

export const UNCLAIMED_SERVICES: readonly UnclaimedService[] = [
  {
    service: 'AWS S3',
    cnameSuffixes: ['s3.amazonaws.com'],
    // bucket.s3-website-us-east-1.amazonaws.com, bucket.s3.eu-west-1.amazonaws.com, bucket.s3-website.eu-central-1.amazonaws.com
    cnamePattern: /\.s3(?:-website)?[.-][a-z0-9-]+\.amazonaws\.com$/,
    fingerprints: ['The specified bucket does not exist', 'NoSuchBucket'],
    status: 'vulnerable',
  },
  { service: 'AWS Elastic Beanstalk', cnameSuffixes: ['elasticbeanstalk.com'], fingerprints: [], nxdomain: true, status: 'vulnerable' },
  {
    service: 'Microsoft Azure',
    cnameSuffixes: [
      'azurewebsites.net',
      'cloudapp.net',
      'cloudapp.azure.com',
      'trafficmanager.net',
      'blob.core.windows.net',
      'azure-api.net',
      'azurehdinsight.net',
      'azureedge.net',
      'azurecontainer.io',
      'database.windows.net',
      'servicebus.windows.net',
    ],
    fingerprints: [],
    nxdomain: true,
    status: 'vulnerable',
  },
  { service: 'GitHub Pages', cnameSuffixes: ['github.io'], fingerprints: ["There isn't a GitHub Pages site here."], status: 'edge-case' },
  { service: 'Heroku', cnameSuffixes: ['herokuapp.com', 'herokudns.com', 'herokussl.com'], fingerprints: ['No such app'], status: 'edge-case' },
  { service: 'Shopify', cnameSuffixes: ['myshopify.com'], fingerprints: ['Sorry, this shop is currently unavailable'], status: 'edge-case' },
  { service: 'Surge.sh', cnameSuffixes: ['surge.sh'], fingerprints: ['project not found'], status: 'vulnerable' },
  {
    service: 'Pantheon',
    cnameSuffixes: ['pantheonsite.io'],
    fingerprints: ['404 error unknown site!', 'The gods are wise, but do not know of the site which you seek'],
    status: 'vulnerable',
  },
  { service: 'Bitbucket', cnameSuffixes: ['bitbucket.io'], fingerprints: ['Repository not found'], status: 'vulnerable' },
  { service: 'Ghost', cnameSuffixes: ['ghost.io'], fingerprints: ['The thing you were looking for is no longer here, or never was'], status: 'vulnerable' },
  { service: 'Agile CRM', cnameSuffixes: ['agilecrm.com'], fingerprints: ['Sorry, this page is no longer available.'], status: 'vulnerable' },
  { service: 'Help Scout', cnameSuffixes: ['helpscoutdocs.com'], fingerprints: ['No settings were found for this company:'], status: 'vulnerable' },
  { service: 'Help Juice', cnameSuffixes: ['helpjuice.com'], fingerprints: ["We could not find what you're looking for."], status: 'vulnerable' },
  { service: 'Gemfury', cnameSuffixes: ['furyns.com'], fingerprints: ['404: This page could not be found.'], status: 'vulnerable' },
  {
    service: 'JetBrains YouTrack',
    cnameSuffixes: ['youtrack.cloud', 'myjetbrains.com'],
    fingerprints: ['is not a registered InCloud YouTrack'],
    status: 'vulnerable',
  },
  { service: 'WordPress.com', cnameSuffixes: ['wordpress.com'], fingerprints: ['Do you want to register'], status: 'vulnerable' },
];

/** The service a CNAME chain points at: the first hop (in chain order) that matches a known service. */
export function serviceForChain(chain: readonly string[]): UnclaimedService | undefined {
  for (const hop of chain) {
    const name = hop.toLowerCase().replace(/\.$/, '');
    const service = UNCLAIMED_SERVICES.find(
      (entry) => entry.cnameSuffixes.some((suffix) => name === suffix || name.endsWith(`.${suffix}`)) || entry.cnamePattern?.test(name),
    );
    if (service) return service;
  }
  return undefined;
}

/** A CNAME chain that ends in NXDOMAIN: whoever registers the target controls the name. */
export function takeoverFromResolution(resolution: NameResolution): TakeoverCandidate | null {
  if (resolution.status !== 'nxdomain' || resolution.cname.length === 0) return null;
  const chain = [...resolution.cname];
  const service = serviceForChain(chain);
  const candidate: TakeoverCandidate = {
    name: resolution.name,
    chain,
    reason: 'dangling-cname',
    evidence: `CNAME chain ends in NXDOMAIN at ${chain[chain.length - 1]}`,
  };
  if (service) candidate.service = service.service;
  return candidate;
}

/** The page served for a name whose chain points at a known service says the resource there is unclaimed. */
export function takeoverFromWeb(web: WebObservation, chain: readonly string[]): TakeoverCandidate | null {
  if (chain.length === 0) return null;
  const service = serviceForChain(chain);
  if (!service || service.fingerprints.length === 0) return null;
  const body = web.bodyExcerpt.toLowerCase();
  const fingerprint = service.fingerprints.find((text) => body.includes(text.toLowerCase()));
  if (fingerprint === undefined) return null;
  return {
    name: web.host.toLowerCase(),
    chain: [...chain],
    reason: 'unclaimed-service',
    service: service.service,
    evidence: `${web.finalUrl} answered with "${fingerprint}" (${service.service}${service.status === 'edge-case' ? ', edge case' : ''})`,
  };
}

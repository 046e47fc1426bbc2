/** What discovery itself finds wrong, as findings: a possible subdomain takeover, an allowed zone transfer. */
import { hostAssetKey, type FindingObservation } from '../../scanner/index.js';
import type { TakeoverCandidate, ZoneTransferResult } from '../../scanner/discovery/index.js';

export const TAKEOVER_DANGLING_CHECK = 'subdomain-takeover-dangling-cname';
export const TAKEOVER_UNCLAIMED_CHECK = 'subdomain-takeover-unclaimed-service';
export const ZONE_TRANSFER_CHECK = 'dns-zone-transfer';

/** Every check id discovery reports under (a scan that looked again and did not see one fixes it). */
export const DISCOVERY_CHECK_IDS = [TAKEOVER_DANGLING_CHECK, TAKEOVER_UNCLAIMED_CHECK, ZONE_TRANSFER_CHECK] as const;

export function takeoverFinding(candidate: TakeoverCandidate): FindingObservation {
  const checkId = candidate.reason === 'dangling-cname' ? TAKEOVER_DANGLING_CHECK : TAKEOVER_UNCLAIMED_CHECK;
  const key = hostAssetKey({ host: candidate.name });
  const end = candidate.chain.at(-1) ?? candidate.name;
  const matcher = `cname:${end}`;
  const service = candidate.service ? ` (${candidate.service})` : '';
  const description =
    candidate.reason === 'dangling-cname'
      ? `${candidate.name} is an alias (CNAME) of ${end}${service}, which does not exist. Whoever registers or claims ${end} serves content under ${candidate.name}.`
      : `${candidate.name} is an alias (CNAME) of ${end}${service}, which answers that nothing is configured there. Whoever claims it on that service serves content under ${candidate.name}.`;
  return {
    kind: 'finding',
    checkId,
    name: 'Possible subdomain takeover',
    severity: 'high',
    description,
    remediation: `Remove the CNAME record of ${candidate.name}, or claim ${end} again on the service it points at.`,
    asset: { type: 'host', key, host: candidate.name },
    matcher,
    fingerprintParts: [checkId, key, matcher],
    evidence: {
      url: candidate.name,
      extracted: {
        chain: [candidate.name, ...candidate.chain],
        reason: candidate.reason,
        evidence: candidate.evidence,
        ...(candidate.service ? { service: candidate.service } : {}),
      },
    },
    source: 'discovery',
  };
}

export function zoneTransferFinding(result: ZoneTransferResult): FindingObservation {
  const key = hostAssetKey({ host: result.zone });
  const matcher = `axfr:${result.server}`;
  return {
    kind: 'finding',
    checkId: ZONE_TRANSFER_CHECK,
    name: 'DNS zone transfer allowed',
    severity: 'medium',
    description: `The authoritative server ${result.server} (${result.address}) hands the whole ${result.zone} zone (${result.records} records, ${result.names.length} names) to anyone who asks (AXFR): a complete map of the zone's hosts.`,
    remediation: 'Allow zone transfers (AXFR/IXFR) only to your secondary servers, by address or TSIG key.',
    asset: { type: 'host', key, host: result.zone },
    matcher,
    fingerprintParts: [ZONE_TRANSFER_CHECK, key, matcher],
    evidence: {
      url: `${result.server}`,
      extracted: { server: result.server, address: result.address, records: result.records, names: result.names.slice(0, 50) },
    },
    source: 'discovery',
  };
}

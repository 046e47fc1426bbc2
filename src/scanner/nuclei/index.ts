/**
 * Native engine for nuclei-compatible HTTP templates.
 *
 *   const { template, errors, warnings } = parseTemplate(yamlText);
 *   const sender = createNodeHttpSender({ lookup: guard.guardedLookup });
 *   const results = await runTemplates([template], { baseUrl: 'https://example.com' }, { send: sender, cluster: true });
 */
export { parseTemplate, TARGET_VARIABLES, type ParseOptions } from './parse/template.js';
export {
  ATTACK_TYPES,
  MAX_PAYLOAD_FILE_BYTES,
  payloadFileProblem,
  type AttackType,
  type BlockPayloads,
  type PayloadFileReader,
  type PayloadSet,
} from './parse/payloads.js';
export { combinationCount, payloadCombinations } from './engine/payloads.js';
export { REQUEST_CAP_WARNING } from './engine/run.js';
export { runTemplates, runTemplatesDetailed, createRunStats } from './engine/run-templates.js';
export { clusterKey } from './engine/clustering.js';
export { computeJarm, JARM_DEFAULT_TIMEOUT_MS, ZERO_JARM, type JarmOptions, type JarmResult } from './jarm/index.js';
export { runDnsTemplates, runDnsTemplatesDetailed } from './engine/dns.js';
export { createDnsResolver, dnsResolverFromClient } from './dns-resolver.js';
export { runSslTemplates, runSslTemplatesDetailed, sslResponse } from './engine/ssl.js';
export { createNodeTlsConnector, type NodeTlsConnectorOptions } from './tls-connector.js';
export { createNodeHttpSender, type NodeHttpSender, type NodeHttpSenderOptions } from './http-sender.js';
export { runNetworkTemplates, createNetworkRunStats, networkTemplatePorts } from './engine/network.js';
export { createNodeNetworkConnector, type NodeNetworkConnectorOptions } from './network-connector.js';
export type * from './network-types.js';
export {
  parseDsl,
  evaluateDsl,
  evaluateExpression,
  renderMarkers,
  findMarkers,
  scopeOf,
  dslToString,
  isKnownFunction,
  knownFunctionNames,
  setDslDebugSink,
  DslEvalError,
  DslSyntaxError,
  type DslNode,
  type DslScope,
  type DslValue,
  type DslRecord,
  type DslDebugSink,
  type ParsedDsl,
  type RenderResult,
} from './dsl/index.js';
export { RESERVED_VARIABLE_NAMES, separateUserVariables, userVariablesOf, withUserVariables } from './user-variables.js';
export { compareVersions, parseVersion } from './versions.js';
export { murmur3x86_32, mmh3Signed } from './mmh3.js';
export { decodeBytes, decodeBody, encodeString, byteLength } from './bytes.js';
export { compileGoRegex, type GoRegex } from './goregex.js';
export { compileJq, runJq } from './jq.js';
export { runTemplateTask, type TemplateTask, type TemplateTaskOutcome } from './template-pool.js';
export type * from './types.js';
export { SEVERITIES } from './types.js';

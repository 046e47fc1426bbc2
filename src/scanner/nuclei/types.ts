/**
 * Types shared by the native nuclei-compatible HTTP template engine.
 *
 * The engine is a pure library: it parses nuclei YAML templates (`parse/`), evaluates the nuclei DSL
 * (`dsl/`) and runs HTTP requests through an injected `HttpSender` (`engine/`). Nothing here touches
 * a database or the network by itself.
 */
import type { DslNode } from './dsl/index.js';
import type { GoRegex } from './goregex.js';
import type { JqProgram } from './jq.js';
import type { NetworkConnector, NetworkRequestBlock } from './network-types.js';
import type { BlockPayloads } from './parse/payloads.js';
import type { OastClient } from './oast.js';

export type Severity = 'info' | 'low' | 'medium' | 'high' | 'critical' | 'unknown';

export const SEVERITIES: readonly Severity[] = ['info', 'low', 'medium', 'high', 'critical', 'unknown'];

/** A problem found in a template. `path` uses nuclei's field names, e.g. `http[0].matchers[1].type`. */
export interface TemplateIssue {
  message: string;
  path: string;
  /** 1-based line in the template text, when the position is known. */
  line?: number;
  /** 1-based column in the template text, when the position is known. */
  column?: number;
}

export interface TemplateClassification {
  cveId?: string[];
  cweId?: string[];
  cvssMetrics?: string;
  cvssScore?: number;
  epssScore?: number;
  cpe?: string;
}

export interface TemplateInfo {
  name: string;
  author: string[];
  severity: Severity;
  description?: string;
  remediation?: string;
  reference: string[];
  tags: string[];
  classification: TemplateClassification;
  metadata: Record<string, unknown>;
}

export type Condition = 'and' | 'or';

export type MatcherType = 'word' | 'regex' | 'status' | 'size' | 'dsl' | 'binary' | 'xpath';

/** A DSL expression compiled at parse time. `ast` is absent when it could not be compiled. */
export interface CompiledDsl {
  source: string;
  ast?: DslNode;
  /** Set when the expression contains `{{...}}` markers that must be rendered before evaluation. */
  hasMarkers: boolean;
}

export interface Matcher {
  /** Position in the template, e.g. `http[0].matchers[1]`. */
  path: string;
  index: number;
  type: MatcherType;
  /** Part of the response the matcher looks at; defaults to `body`. */
  part: string;
  condition: Condition;
  negative: boolean;
  caseInsensitive: boolean;
  name?: string;
  internal: boolean;
  matchAll: boolean;
  words: string[];
  /** Compiled (RE2, as Go and nuclei) regexes, same order as the template. */
  regex: GoRegex[];
  regexSource: string[];
  status: number[];
  size: number[];
  dsl: CompiledDsl[];
  /** Decoded `binary` needles (bytes). */
  binary: Uint8Array[];
  /** XPath 1.0 queries of an `xpath` matcher (HTML, or XML when the part starts with `<?xml`). */
  xpath?: string[];
  /**
   * When set the matcher cannot be evaluated faithfully (unsupported feature, untranslatable regex, unknown
   * DSL function...). The whole request block is then treated as NOT matching; a warning was emitted at parse time.
   */
  unsupported?: string;
}

export type ExtractorType = 'regex' | 'kval' | 'json' | 'xpath' | 'dsl';

export interface Extractor {
  path: string;
  index: number;
  type: ExtractorType;
  name?: string;
  part: string;
  internal: boolean;
  group: number;
  caseInsensitive: boolean;
  regex: GoRegex[];
  regexSource: string[];
  kval: string[];
  json: JqProgram[];
  jsonSource: string[];
  dsl: CompiledDsl[];
  /** XPath 1.0 queries of an `xpath` extractor; `attribute` names the attribute of each selected element to extract. */
  xpath?: string[];
  attribute?: string;
  /** When set the extractor is skipped at run time (a warning was emitted at parse time). */
  unsupported?: string;
}

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'CONNECT' | 'OPTIONS' | 'TRACE' | 'PATCH' | 'PURGE' | 'DEBUG';

export interface HttpRequestBlock {
  /** e.g. `http[0]` (or `requests[0]` for the legacy key). */
  path: string;
  index: number;
  /** Optional block id (`id:`); earlier block values are exposed to later blocks as `<id>_<name>`. */
  id?: string;
  method: string;
  /** `path:` entries (usually starting with `{{BaseURL}}`). */
  paths: string[];
  /** `raw:` entries (full HTTP requests). When non-empty they are used instead of `paths`. */
  raw: string[];
  headers: Record<string, string>;
  body?: string;
  redirects: boolean;
  hostRedirects: boolean;
  maxRedirects: number;
  stopAtFirstMatch: boolean;
  matchersCondition: Condition;
  matchers: Matcher[];
  extractors: Extractor[];
  /** True when matchers/extractors reference indexed variables like `status_code_1` (nuclei's req-condition). */
  reqCondition: boolean;
  /** `iterate-all`: a request using internal extractors' values is sent once per value (engine/iterate-all.ts). */
  iterateAll?: boolean;
  disableCookie: boolean;
  disablePathAutomerge: boolean;
  skipVariablesCheck: boolean;
  /** Max bytes of response body to read (nuclei `max-size`). */
  maxSize?: number;
  /** `race: true` with `race_count`: copies of the first request sent together (see engine/race.ts). */
  race?: { count: number };
  /** `unsafe: true`: raw requests go out byte for byte over a socket (see unsafe-sender.ts). */
  unsafe?: boolean;
  /** `payloads` / `attack`: the block's requests are sent once per combination (engine/payloads.ts). */
  payloads?: BlockPayloads;
  /** When set the block is not sent at all (unsupported attack mode etc.); a warning was emitted. */
  skip?: string;
  /** nuclei `self-contained` (the block's or the template's): its URLs come from the block itself, not the target. */
  selfContained?: boolean;
}

export interface NucleiTemplate {
  id: string;
  info: TemplateInfo;
  /** Template `variables`, in declaration order. Values may contain `{{...}}` DSL markers. */
  variables: Array<[string, string]>;
  /** Template `constants` (plain values, no evaluation). */
  constants: Record<string, string>;
  requests: HttpRequestBlock[];
  /** Key used in the YAML for the http blocks (`http` or legacy `requests`). */
  protocolKey: 'http' | 'requests';
  /** `dns:` blocks (see engine/dns.ts); absent when the template has none. */
  dns?: DnsRequestBlock[];
  /** `ssl:` blocks (see engine/ssl.ts); absent when the template has none. */
  ssl?: SslRequestBlock[];
  /** Top-level `stop-at-first-match`: stop running further request blocks once one matched. */
  stopAtFirstMatch: boolean;
  /** When set the whole template is not run (e.g. a `flow:` the engine cannot execute). */
  skip?: string;
  /** Top-level `self-contained: true`: runs once per scan with no target (run-self-contained.ts), not per endpoint. */
  selfContained?: boolean;
  /** `flow:` JavaScript orchestrating the blocks (engine/flow.ts runs it in a QuickJS sandbox). */
  flow?: string;
  /** `workflows:` steps (engine/workflow.ts); a workflow template has no blocks of its own. */
  workflow?: WorkflowStep[];
  /** Warnings emitted while parsing (same list as returned by parseTemplate). */
  warnings: TemplateIssue[];
  /** `network` / `tcp` blocks, run by runNetworkTemplates (engine/network.ts); absent when the template has none. */
  network?: NetworkRequestBlock[];
  /** Payload files the template read (as it names them), in the order first used; absent when none. */
  payloadFiles?: string[];
}

/** One step of a workflow (nuclei pkg/workflows WorkflowTemplate). */
export interface WorkflowStep {
  /** Template path as written (`http/technologies/tech-detect.yaml`); resolved by the caller. */
  template?: string;
  /** Run every available template with one of these tags (lower case). */
  tags: string[];
  /** Name matchers over the step's results; each runs its subtemplates when it matches. */
  matchers: WorkflowMatcher[];
  /** Run when the step's templates matched (only used when there are no matchers). */
  subtemplates: WorkflowStep[];
}

export interface WorkflowMatcher {
  /** Matcher or extractor names to look for in the step's results. */
  names: string[];
  condition: Condition;
  subtemplates: WorkflowStep[];
}

export interface ParseResult {
  template?: NucleiTemplate;
  errors: TemplateIssue[];
  warnings: TemplateIssue[];
}

/* ------------------------------------------------------------------------------------------------------------ */
/* HTTP sender                                                                                                  */
/* ------------------------------------------------------------------------------------------------------------ */

export interface HttpSendRequest {
  method: string;
  url: string;
  /** Header name → value, in the order they should be sent. A `Host` header overrides the URL authority. */
  headers: Record<string, string>;
  /** Request body. Strings are sent as UTF-8, except U+DC80..U+DCFF which stand for raw bytes (see bytes.ts). */
  body?: string;
  followRedirects: boolean;
  maxRedirects: number;
  /** Only follow redirects that stay on the same host (nuclei `host-redirects`). */
  sameHostRedirectsOnly?: boolean;
  timeoutMs: number;
  /** TLS server name to send instead of the URL's host (nuclei `@tls-sni`); ignored for IP literals. */
  sni?: string;
  /**
   * nuclei `unsafe: true`: these exact bytes (surrogateescape string, see bytes.ts) are written to a connection to
   * the URL's host and port instead of a request built from method, headers and body; redirects are not followed.
   */
  unsafeRaw?: string;
  /** Optional per-request cap on the body size, lower than the sender's own. */
  maxBodyBytes?: number;
  signal?: AbortSignal;
}

export interface HttpSendResponse {
  status: number;
  statusText?: string;
  httpVersion?: string;
  /** Response headers; node-style lowercase names are fine. Repeated headers as arrays. */
  headers: Record<string, string | string[]>;
  /**
   * Header lines as received (name, value), used to render `all_headers`. Optional: when missing the engine
   * renders `headers` instead.
   */
  rawHeaders?: Array<[string, string]>;
  /**
   * Decoded body, bounded. Bytes that are not valid UTF-8 must be mapped to U+DC80+byte (Python's
   * "surrogateescape") so binary bodies survive; `decodeBody()` in bytes.ts does this.
   */
  body: string;
  bodyTruncated?: boolean;
  durationMs: number;
  /** The request as sent (request line, headers, body), bounded. */
  rawRequest: string;
  /** The response as received (status line, headers, body), bounded. */
  rawResponse: string;
  /** URL of the last response after redirects. */
  finalUrl: string;
  /**
   * The redirect responses that led to this one, first first (only when redirects were followed): status and
   * headers, empty body, `finalUrl` the URL that answered with the redirect. nuclei matches each of them too.
   */
  redirectChain?: HttpSendResponse[];
}

export type HttpSender = (req: HttpSendRequest) => Promise<HttpSendResponse>;

/* ------------------------------------------------------------------------------------------------------------ */
/* Engine                                                                                                       */
/* ------------------------------------------------------------------------------------------------------------ */

export interface ScanTarget {
  /** Absent: no target (self-contained templates, whose URLs all come from the template; nuclei's empty input). */
  baseUrl?: string;
}

export interface RunDeps {
  send: HttpSender;
  /** Send identical requests (method, URL, headers, body, redirect settings) only once per host. Default false. */
  cluster?: boolean;
  /**
   * Upper bound of requests a single template may issue against the target (sent or served from the cluster
   * cache), payload combinations included. Default 100. Reaching it stops the template with a warning that
   * starts with `request limit of` (REQUEST_CAP_WARNING).
   */
  maxRequestsPerTemplate?: number;
  /** Per-request timeout. Default 10 000 ms. */
  timeoutMs?: number;
  /** Templates run concurrently. Default 4. */
  concurrency?: number;
  /** User-Agent added when a request has none. */
  userAgent?: string;
  /**
   * Allow template requests whose URL points to another host/port than the target (e.g. an absolute URL in `path`).
   * Default false: such requests are skipped with a warning. Redirects are governed by the sender (scope guard).
   */
  allowOffTargetRequests?: boolean;
  /** Mutable counters; pass your own object to read them after the run. */
  stats?: RunStats;
  /** Receives run-time warnings (skipped requests, unsupported matchers, send errors...). */
  onWarning?: (warning: RunWarning) => void;
  /** Abort the run. */
  signal?: AbortSignal;
  /** Gives `{{interactsh-url}}` values and their interactions (src/oast). Without it templates using OAST are skipped. */
  oast?: OastClient;
  /** How long a request that carried an OAST URL waits for interactions (nuclei's cooldown). Default 5 000 ms. */
  oastCooldownMs?: number;
}

export interface RunStats {
  /** Requests actually handed to the sender. */
  requestsSent: number;
  /** Requests answered from the cluster cache instead of being sent. */
  requestsSaved: number;
  /** Requests that failed (network error, timeout, refused by the scope guard...). */
  requestsFailed: number;
  templatesRun: number;
  templatesSkipped: number;
}

export interface RunWarning {
  templateId: string;
  path?: string;
  message: string;
}

export interface TemplateResult {
  templateId: string;
  templateName: string;
  severity: Severity;
  /** Set when the finding comes from a named matcher (matchers-condition: or). */
  matcherName?: string;
  /** Set when the finding comes from a named extractor of a template whose matchers did not name the result. */
  extractorName?: string;
  extractedResults: string[];
  /** URL of the request that produced the finding. */
  matchedUrl: string;
  /** Excerpt of the raw request. */
  request: string;
  /** Excerpt of the raw response. */
  response: string;
  classification: {
    cveId?: string[];
    cweId?: string[];
    cvssMetrics?: string;
    cvssScore?: number;
  };
  remediation?: string;
  description?: string;
  reference?: string[];
  tags?: string[];
  author?: string[];
}

export interface RunOutput {
  results: TemplateResult[];
  warnings: RunWarning[];
  stats: RunStats;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* DNS and SSL protocols (host targets)                                                                         */
/* ------------------------------------------------------------------------------------------------------------ */

/** What the matchers/extractors of any protocol's block need (engine/operators.ts). */
export type OperatorBlock = Pick<HttpRequestBlock, 'matchers' | 'extractors' | 'matchersCondition'>;

export interface DnsRequestBlock extends OperatorBlock {
  /** e.g. `dns[0]`. */
  path: string;
  index: number;
  id?: string;
  /** Question name, usually `{{FQDN}}` (may contain markers). */
  name: string;
  /** Question type, upper case (A, AAAA, CNAME, NS, TXT, MX, PTR, SOA, SRV, CAA, DS, TLSA, ANY). */
  type: string;
  /** Question class, upper case (IN, CH, HS, CS, NONE, ANY). */
  class: string;
  /** Recursion desired flag (nuclei default true). */
  recursion: boolean;
  /** Attempts on network errors (nuclei default 3). */
  retries: number;
  /** Resolvers given in the template; ignored (the injected resolver decides), a warning was emitted. */
  resolvers: string[];
  stopAtFirstMatch: boolean;
  /** `payloads` / `attack` (inline): one question per combination. */
  payloads?: BlockPayloads;
  /** When set the block is not run (trace...); a warning was emitted. */
  skip?: string;
}

export type TlsVersionName = 'sslv3' | 'tls10' | 'tls11' | 'tls12' | 'tls13';

export interface SslRequestBlock extends OperatorBlock {
  /** e.g. `ssl[0]`. */
  path: string;
  index: number;
  id?: string;
  /** `host:port` to connect to, usually `{{Host}}:{{Port}}`. */
  address: string;
  minVersion?: TlsVersionName;
  maxVersion?: TlsVersionName;
  /** IANA cipher suite names asked for (translated to OpenSSL names when the connection is made). */
  cipherSuites: string[];
  stopAtFirstMatch: boolean;
  /** When set the block is not run (a version or mode node:tls cannot honour...); a warning was emitted. */
  skip?: string;
}

/** One DNS resource record as decoded from the wire (dns-packet's shape). */
export interface DnsRecord {
  name: string;
  type: string;
  class?: string;
  ttl?: number;
  /** Type-specific data as dns-packet decodes it (string, Buffer, Buffer[], object...). */
  data?: unknown;
  /** EDNS (OPT) fields. */
  udpPayloadSize?: number;
  extendedRcode?: number;
  ednsVersion?: number;
  flags?: number;
  flag_do?: boolean;
}

/** A DNS message (dns-packet's decoded shape). */
export interface DnsMessage {
  id?: number;
  type?: 'query' | 'response';
  /** Header flags as a 16-bit field (qr, opcode, aa, tc, rd, ra, z, ad, cd, rcode). */
  flags?: number;
  rcode?: string;
  questions?: Array<{ name: string; type: string; class?: string }>;
  answers?: DnsRecord[];
  authorities?: DnsRecord[];
  additionals?: DnsRecord[];
}

export interface DnsQuestion {
  /** Name without the trailing dot. */
  name: string;
  type: string;
  class: string;
  recursionDesired: boolean;
  /** nuclei sets AD on TXT questions and always adds EDNS0 (udp 4096). */
  authenticatedData: boolean;
  retries: number;
  /** Per attempt; undefined = the resolver's own setting. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Sends one DNS question and returns the answer whatever its rcode; throws on network failure. */
export interface DnsResolver {
  exchange(question: DnsQuestion): Promise<{ request: DnsMessage; response: DnsMessage }>;
}

/** A TLS handshake to make (engine/ssl.ts → injected connector). */
export interface TlsProbeRequest {
  host: string;
  port: number;
  /** SNI: the host name (not sent for IP addresses). */
  servername?: string;
  minVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  maxVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  /** OpenSSL cipher list (TLS 1.2 and below) and TLS 1.3 suites; undefined = every cipher OpenSSL has. */
  ciphers?: string;
  ciphersuites?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** What a completed handshake showed. */
export interface TlsProbe {
  /** node's getProtocol(): TLSv1, TLSv1.1, TLSv1.2, TLSv1.3. */
  protocol: string;
  /** IANA name of the negotiated suite (node's getCipher().standardName). */
  cipher: string;
  /** DER certificates as sent: leaf first. */
  chain: Uint8Array[];
  /** Address actually connected to. */
  remoteAddress: string;
  servername?: string;
}

export type TlsConnector = (req: TlsProbeRequest) => Promise<TlsProbe>;

export interface HostTarget {
  /** Host name or IP address (no port, no brackets needed). */
  host: string;
  /** Port for ssl templates (default 443). */
  port?: number;
}

export interface HostRunDeps {
  /** Questions / handshakes one template may make against the host, payload combinations included. Default 100. */
  maxRequestsPerTemplate?: number;
  /** Per request timeout: ssl handshakes default to 10 000 ms; dns questions to the resolver's own setting. */
  timeoutMs?: number;
  /** Templates run concurrently. Default 4. */
  concurrency?: number;
  stats?: RunStats;
  onWarning?: (warning: RunWarning) => void;
  signal?: AbortSignal;
  /** `{{interactsh-url}}` values and their interactions (src/oast). Without it templates using OAST are skipped. */
  oast?: OastClient;
  /** How long a question that carried an OAST URL waits for interactions. Default 5 000 ms. */
  oastCooldownMs?: number;
}

export interface DnsRunDeps extends HostRunDeps {
  resolver: DnsResolver;
}

export interface SslRunDeps extends HostRunDeps {
  connect: TlsConnector;
  /** Allow an `address` that is not the target's host:port. Default false: such blocks are skipped. */
  allowOffTargetRequests?: boolean;
  /** Plain TCP connector for `jarm_hash` (ten JARM probes per host:port and run); without it jarm_hash is not computed (warning). */
  jarmConnect?: NetworkConnector;
  /** Per-probe timeout of those probes. Default 10 000 ms. */
  jarmTimeoutMs?: number;
}

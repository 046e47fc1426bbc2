/**
 * Parse and validate nuclei templates (YAML), keeping only what the native engine can run: HTTP requests.
 *
 * - Hard problems (broken YAML, missing/invalid id, name or severity, unknown matcher/extractor types, missing
 *   required fields, wrong field types, DSL syntax errors, templates with no HTTP part) are `errors`; no template
 *   is returned then.
 * - Features the engine does not implement are `warnings` with their path, and are skipped at run time:
 *   a request block using payloads/attack modes, race, pipeline, unsafe raw requests, fuzzing, signatures,
 *   digest auth is not sent (`{{interactsh-url}}` is given at run time, engine/oast.ts); an xpath matcher, an untranslatable
 *   regex or a DSL expression calling an unknown helper makes its matcher "unsupported", and a request block with
 *   an unsupported matcher never matches (see engine/: we prefer a missed finding to a false one); xpath / jq
 *   extractors we cannot run are skipped.
 */
import { LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import type { HttpRequestBlock, NucleiTemplate, ParseResult } from '../types.js';
import { Ctx, isRecord, typeName } from './context.js';
import { markerUnknownFunctions } from './dsl.js';
import { parseInfo } from './info.js';
import { parseNetworkProtocol } from './network.js';
import { parseBlock } from './requests.js';
import { checkSelfContained } from './self-contained.js';
import { parseFlow } from './flow.js';
import { parseWorkflowSteps } from './workflow.js';
import type { PayloadParseOptions } from './payloads.js';
import { HOST_PROTOCOLS, parseHostProtocols } from './host-protocols.js';

export type { ParseResult, TemplateIssue } from '../types.js';

const TEMPLATE_ID_RE = /^([a-zA-Z0-9]+[-_])*[a-zA-Z0-9]+$/;
const MAX_TEMPLATE_BYTES = 2 * 1024 * 1024;

const OTHER_PROTOCOLS = ['file', 'headless', 'websocket', 'whois', 'code', 'javascript'] as const;

const KNOWN_TOP_LEVEL = new Set<string>([
  'id',
  'info',
  'variables',
  'constants',
  'http',
  'requests',
  'flow',
  'self-contained',
  'stop-at-first-match',
  'signature',
  'network',
  'tcp',
  'workflows',
  ...OTHER_PROTOCOLS,
  ...HOST_PROTOCOLS,
]);

/** Variables the engine provides from the target URL. */
export const TARGET_VARIABLES = ['BaseURL', 'RootURL', 'Hostname', 'Host', 'Port', 'Path', 'File', 'Scheme', 'Query', 'Input', 'FQDN'];

/** `readPayloadFile`: the template library's helper files (payload files); without it a file payload is an error. */
export type ParseOptions = PayloadParseOptions;

/**
 * Parse a nuclei template. Returns the compiled template when there are no errors, plus every error and warning
 * with its path (e.g. `http[0].matchers[1].type`) and 1-based line/column.
 */
export function parseTemplate(text: string, options: ParseOptions = {}): ParseResult {
  const lines = new LineCounter();
  if (Buffer.byteLength(text, 'utf8') > MAX_TEMPLATE_BYTES) {
    return { errors: [{ message: `template is larger than ${MAX_TEMPLATE_BYTES} bytes`, path: '' }], warnings: [] };
  }
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const ctx = new Ctx(doc.contents as YamlNode | null, lines);
  const position = (e: {
    pos: [number, number];
    linePos?: [{ line: number; col: number }] | [{ line: number; col: number }, { line: number; col: number }];
  }) => {
    const p = e.linePos?.[0] ?? lines.linePos(e.pos[0]);
    return { line: p.line, column: p.col };
  };
  for (const err of doc.errors) {
    ctx.errors.push({ message: `YAML syntax error: ${err.message.split('\n')[0]}`, path: '', ...position(err) });
  }
  for (const w of doc.warnings) {
    ctx.warnings.push({ message: `YAML: ${w.message.split('\n')[0]}`, path: '', ...position(w) });
  }
  if (ctx.errors.length) return { errors: ctx.errors, warnings: ctx.warnings };

  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { errors: [{ message: `YAML error: ${(err as Error).message}`, path: '' }], warnings: ctx.warnings };
  }
  if (!isRecord(root)) {
    ctx.error(`a template must be a YAML mapping, got ${typeName(root)}`, []);
    return { errors: ctx.errors, warnings: ctx.warnings };
  }

  for (const key of Object.keys(root)) {
    if (!KNOWN_TOP_LEVEL.has(key)) ctx.warn(`unknown top-level field '${key}' ignored`, [key], true);
  }

  // id
  const idRaw = root.id;
  let id = '';
  if (idRaw === undefined || idRaw === null || idRaw === '') ctx.error("missing required field 'id'", []);
  else if (typeof idRaw !== 'string' && typeof idRaw !== 'number') ctx.error(`'id' must be a string, got ${typeName(idRaw)}`, ['id']);
  else if (!TEMPLATE_ID_RE.test(String(idRaw))) {
    ctx.error(`invalid id ${JSON.stringify(String(idRaw))}: use letters and digits separated by single '-' or '_'`, ['id']);
  } else id = String(idRaw);

  // workflows name no severity of their own (their templates do)
  const isWorkflow = root.workflows !== undefined && root.workflows !== null;
  const info = parseInfo(ctx, isWorkflow && isRecord(root.info) && !root.info.severity ? { ...root.info, severity: 'info' } : root.info);
  const workflow = isWorkflow ? parseWorkflowSteps(ctx, root.workflows) : undefined;

  // protocols
  const protocolKey: 'http' | 'requests' = root.http !== undefined ? 'http' : 'requests';
  const httpRaw = root.http ?? root.requests;
  if (root.http !== undefined && root.requests !== undefined) ctx.warn("both 'http' and legacy 'requests' given; 'requests' is ignored", ['requests'], true);
  else if (root.requests !== undefined) ctx.warn("'requests' is deprecated; use 'http'", ['requests'], true);
  const others = OTHER_PROTOCOLS.filter((p) => root[p] !== undefined && root[p] !== null);
  const hostProtocols = HOST_PROTOCOLS.filter((p) => root[p] !== undefined && root[p] !== null);
  const hasNetwork = (root.network ?? root.tcp) !== undefined && (root.network ?? root.tcp) !== null;
  const running = [...(httpRaw !== undefined ? ['http'] : []), ...hostProtocols, ...(hasNetwork ? ['network'] : [])];
  if (workflow && running.length) ctx.warn(`a workflow runs other templates; its own ${running.join('/')} requests are ignored`, ['workflows'], true);
  for (const p of others) {
    if (!running.length && !workflow) ctx.error(`protocol ${p} is not supported`, [p], true);
    else ctx.warn(`protocol ${p} is not supported; only the ${running.join('/')} requests of this template run`, [p], true);
  }
  if (!running.length && others.length === 0 && !workflow) ctx.error('template has no http, dns, ssl or network requests (the supported protocols)', []);

  const flow = parseFlow(ctx, root);
  const skip: string | undefined = flow.skip;
  const selfContained = ctx.bool(root, 'self-contained', []) ?? false;
  if (root.signature !== undefined) ctx.warn("'signature' is not supported; ignored", ['signature'], true);
  const templateStop = root['stop-at-first-match'] === true;

  // variables / constants
  const variables: Array<[string, string]> = [];
  const knownVars = new Set<string>([...TARGET_VARIABLES, ...flow.setNames]);
  if (root.variables !== undefined && root.variables !== null) {
    if (!isRecord(root.variables)) ctx.error(`'variables' must be a mapping, got ${typeName(root.variables)}`, ['variables']);
    else
      for (const [k, v] of Object.entries(root.variables)) {
        if (v !== null && typeof v === 'object') {
          ctx.error(`variable '${k}' must be a scalar`, ['variables', k]);
          continue;
        }
        const value = v === null || v === undefined ? '' : String(v);
        const unknown = markerUnknownFunctions(value);
        if (unknown.length)
          ctx.warn(`unknown helper function${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; requests using this variable are skipped`, ['variables', k]);
        variables.push([k, value]);
        knownVars.add(k);
      }
  }
  const constants: Record<string, string> = {};
  if (root.constants !== undefined && root.constants !== null) {
    if (!isRecord(root.constants)) ctx.error(`'constants' must be a mapping, got ${typeName(root.constants)}`, ['constants']);
    else
      for (const [k, v] of Object.entries(root.constants)) {
        constants[k] = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
        knownVars.add(k);
      }
  }

  // http blocks
  const requests: HttpRequestBlock[] = [];
  if (httpRaw !== undefined) {
    if (!Array.isArray(httpRaw)) ctx.error(`'${protocolKey}' must be a list of requests, got ${typeName(httpRaw)}`, [protocolKey]);
    else {
      // names extracted in any block can feed any later block
      for (const b of httpRaw) {
        if (isRecord(b) && Array.isArray(b.extractors)) {
          for (const e of b.extractors) if (isRecord(e) && typeof e.name === 'string') knownVars.add(e.name);
        }
      }
      httpRaw.forEach((b, i) => {
        const block = parseBlock(ctx, b, [protocolKey, i], i, knownVars, templateStop, options);
        if (block) requests.push(block);
      });
      if (httpRaw.length === 0) ctx.error(`'${protocolKey}' has no requests`, [protocolKey]);
      // A request without operators is a normal step (a login, an upload the next request checks); only a template
      // none of whose http requests can match or extract never reports anything (network/dns/ssl warn the same way).
      if (requests.length > 0 && !requests.some((block) => block.matchers.length || block.extractors.length)) {
        ctx.warn('no http request has matchers or extractors; its http requests can never produce a finding', [protocolKey]);
      }
    }
  }
  checkSelfContained(ctx, requests, protocolKey, selfContained && !workflow, [...hostProtocols, ...(hasNetwork ? ['network'] : [])]);

  const network = parseNetworkProtocol(ctx, root, knownVars, templateStop, options);
  // dns/ssl requests get their own input variables, not the URL ones
  const templateVars = new Set([...knownVars].filter((v) => !TARGET_VARIABLES.includes(v)));
  const hostBlocks = parseHostProtocols(ctx, root, templateVars, templateStop, httpRaw !== undefined);

  if (ctx.errors.length || !info) return { errors: ctx.errors, warnings: ctx.warnings };
  const template: NucleiTemplate = {
    ...hostBlocks,
    id,
    info,
    variables,
    constants,
    requests,
    protocolKey,
    stopAtFirstMatch: templateStop,
    skip,
    ...(flow.flow !== undefined ? { flow: flow.flow } : {}),
    warnings: ctx.warnings,
    ...(network ? { network } : {}),
    ...(workflow ? { workflow, requests: [], dns: undefined, ssl: undefined, network: undefined } : {}),
    // nuclei runs a self-contained template once, with no input: only its http requests carry their own URLs
    ...(selfContained && !workflow ? { selfContained, dns: undefined, ssl: undefined, network: undefined } : {}),
  };
  const payloadFiles = [...new Set([...requests, ...(network ?? [])].flatMap((b) => b.payloads?.sets.flatMap((s) => (s.file ? [s.file] : [])) ?? []))];
  if (payloadFiles.length) template.payloadFiles = payloadFiles;
  return { template, errors: ctx.errors, warnings: ctx.warnings };
}

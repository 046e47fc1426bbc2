/**
 * What one YAML file is, for the coverage report: a nuclei template or not, its protocol, and whether the engine
 * loads it cleanly, with warnings or not at all (judged exactly as an upload is: checkTemplateContent).
 */
import { isMap, isScalar, parseDocument } from 'yaml';
import { AppError } from '../../src/errors.js';
import { checkTemplateContent } from '../../src/modules/templates/content.js';
import type { PayloadFileReader } from '../../src/scanner/nuclei/index.js';

/**
 * nuclei's request-block keys (pkg/templates/templates.go) and the protocol each one counts under; the legacy
 * names (`requests`, `tcp`) count as their current protocol.
 */
const PROTOCOL_KEYS: Record<string, string> = {
  http: 'http',
  requests: 'http',
  dns: 'dns',
  file: 'file',
  network: 'network',
  tcp: 'network',
  headless: 'headless',
  ssl: 'ssl',
  websocket: 'websocket',
  whois: 'whois',
  code: 'code',
  javascript: 'javascript',
  workflows: 'workflow',
};

/** A template whose blocks belong to more than one protocol is counted once, under this name. */
export const MULTI_PROTOCOL = 'multi';
/** A template with no known request block (it is rejected by the engine). */
export const NO_PROTOCOL = 'none';

export type TemplateStatus = 'loaded' | 'warnings' | 'rejected';

export interface ClassifiedFile {
  /** false: a YAML file that is not a nuclei template (no top-level `id` and `info`), e.g. a payload list. */
  template: boolean;
  protocol: string;
  /** The protocols of a multi-protocol template (one entry otherwise). */
  protocols: string[];
  status: TemplateStatus;
  /** Distinct warning causes (status `warnings`), or distinct rejection causes (status `rejected`). */
  causes: string[];
  /** Variables the template needs from the user (`{{username}}`...): not a warning; it runs once they are given. */
  userVariables: string[];
}

/** Top-level keys: from the YAML document when it reads as a mapping, else from unindented `key:` lines. */
function topLevelKeys(text: string): string[] {
  try {
    const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: false });
    if (doc.errors.length === 0 && isMap(doc.contents)) {
      return doc.contents.items.map((pair) => (isScalar(pair.key) ? String(pair.key.value) : ''));
    }
  } catch {
    // broken YAML: fall through to the line scan, so a broken template still counts as a (rejected) template
  }
  return [...text.matchAll(/^([A-Za-z][\w-]*)[ \t]*:/gm)].map((m) => m[1]!);
}

/** The engine's messages with the template-specific parts removed, so equal problems share one key. */
export function causeKeys(message: string): string[] {
  const m = message.trim();
  let match = /^protocol (\w+) is not supported/.exec(m);
  if (match) return [`unsupported protocol: ${match[1]}`];
  match = /^unknown helper functions? (\w+(?:, \w+)*)/.exec(m);
  if (match) return match[1]!.split(', ').map((name) => `unsupported helper: ${name}`);
  match = /^unknown variables? ((?:\{\{[^}]*\}\}(?:, )?)+)/.exec(m);
  if (match) return [...match[1]!.matchAll(/\{\{([^}]*)\}\}/g)].map((v) => `unknown variable: ${v[1]}`);
  if (/^jq expression /.test(m)) return ['jq expression not supported'];
  match = /^flow calls ((?:\w+\(\)(?:, )?)+), which the engine cannot run/.exec(m);
  if (match) return [`flow calls: ${match[1]}`];
  if (/^a self-contained request has no target/.test(m)) return ['self-contained request using target variables'];
  if (/^interactsh/i.test(m)) return ['interactsh (OAST)'];
  match = /^unknown top-level field '([^']*)'/.exec(m);
  if (match) return [`unknown top-level field: ${match[1]}`];
  if (/^YAML syntax error/.test(m)) return ['YAML syntax error'];
  if (/^invalid id /.test(m)) return ['invalid id'];
  if (/^A template may be at most \d+ bytes/.test(m)) return ['larger than the upload limit'];
  return [generic(m)];
}

/**
 * Double-quoted values (expressions, regexes), long single-quoted parts, numbers and list indexes are
 * template-specific; short single-quoted words are the engine's field names (`'info.severity'`) and stay.
 */
function generic(message: string): string {
  return message
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/'([^']*)'/g, (whole, inner: string) => (/^[\w.@-]{1,40}$/.test(inner) ? whole : "'…'"))
    .replace(/`[^`]*`/g, '`…`')
    .replace(/\[\d+\]/g, '[]')
    .replace(/(?<![\w-])\d+(?![\w-])/g, 'N')
    .replace(/\s+/g, ' ')
    .slice(0, 140);
}

function classifyProtocols(keys: string[]): string[] {
  const protocols = new Set<string>();
  for (const key of keys) {
    const protocol = PROTOCOL_KEYS[key];
    if (protocol) protocols.add(protocol);
  }
  return [...protocols].sort();
}

/** Every distinct cause of a list of engine messages, in first-seen order. */
function distinctCauses(messages: string[]): string[] {
  return [...new Set(messages.flatMap(causeKeys))];
}

/** `readPayloadFile`: the library's helper files, as an import of the library would provide them. */
export function classifyFile(text: string, readPayloadFile?: PayloadFileReader): ClassifiedFile {
  const keys = topLevelKeys(text);
  const protocols = classifyProtocols(keys);
  const protocol = protocols.length === 0 ? NO_PROTOCOL : protocols.length === 1 ? protocols[0]! : MULTI_PROTOCOL;
  const template = keys.includes('id') && keys.includes('info');
  if (!template) return { template, protocol, protocols, status: 'rejected', causes: [], userVariables: [] };
  try {
    const checked = checkTemplateContent(text, readPayloadFile);
    const { userVariables } = checked;
    if (checked.warnings.length === 0) return { template, protocol, protocols, status: 'loaded', causes: [], userVariables };
    return { template, protocol, protocols, status: 'warnings', causes: distinctCauses(checked.warnings.map((w) => w.message)), userVariables };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const messages = error.details?.length ? error.details.map((d) => d.message) : [error.message];
    return { template, protocol, protocols, status: 'rejected', causes: distinctCauses(messages), userVariables: [] };
  }
}

/**
 * Values a user gives to templates (nuclei's `-var name=value`): `{{username}}`, `{{password}}`, `{{token}}`...
 *
 * A template asks for such a value when what it sends (http paths, raw requests, headers, bodies; network inputs
 * and host entries; dns names; ssl addresses) or one of its `variables:` uses a name that nothing in the template
 * defines: not a target/input variable, a constant, an extractor, a named read, `randstr` or a template variable
 * that resolves by itself. `variables: { username: "{{username}}" }` (how nuclei-templates declare an input) asks
 * for `username` too.
 *
 * `withUserVariables` gives a template the values it asks for, or marks it skipped (`skip`, which every runner
 * honours) with the names it lacks. Given values also replace template variables of the same name, as nuclei's
 * CLI variables do (nuclei#3564); constants stay. Values travel as constants: plain strings, never evaluated as
 * DSL, so a password containing `{{` is sent as typed.
 */
import { markerVariables } from './parse/dsl.js';
import { DNS_INPUT_VARIABLES } from './parse/dns.js';
import { SSL_INPUT_VARIABLES } from './parse/ssl.js';
import { TARGET_VARIABLES } from './parse/template.js';
import { unknownVariablesOfWarning } from './parse/unknown-variables.js';
import type { NucleiTemplate, TemplateIssue } from './types.js';

/** Names the engine always provides: a user value under one of them would be ignored, so they are refused. */
export const RESERVED_VARIABLE_NAMES: ReadonlySet<string> = new Set([...TARGET_VARIABLES, ...DNS_INPUT_VARIABLES, ...SSL_INPUT_VARIABLES, 'interactsh-url']);

const RANDSTR = /^randstr(_\d+)?$/;

/** What the template sends, as text with `{{markers}}`. */
function sentTexts(template: NucleiTemplate): string[] {
  const texts: string[] = [];
  for (const block of template.requests) texts.push(...block.paths, ...block.raw, ...Object.values(block.headers), block.body ?? '');
  for (const block of template.network ?? []) texts.push(...block.addresses.map((a) => a.address), ...block.inputs.map((input) => input.data));
  for (const block of template.dns ?? []) texts.push(block.name);
  for (const block of template.ssl ?? []) texts.push(block.address);
  return texts;
}

/** Names defined by the template's own blocks: extractors, named reads, payloads, `<blockId>_<name>` values. */
function blockNames(template: NucleiTemplate): { names: Set<string>; blockIds: string[] } {
  const names = new Set<string>();
  const blockIds: string[] = [];
  const blocks = [...template.requests, ...(template.network ?? []), ...(template.dns ?? []), ...(template.ssl ?? [])];
  for (const block of blocks) {
    if (block.id) blockIds.push(block.id);
    for (const extractor of block.extractors) if (extractor.name) names.add(extractor.name);
    // A block's payload values are its own (one round per combination), never the user's to give.
    for (const set of ('payloads' in block ? block.payloads?.sets : undefined) ?? []) names.add(set.name);
  }
  for (const block of template.network ?? []) for (const input of block.inputs) if (input.name) names.add(input.name);
  return { names, blockIds };
}

/** The names the template needs from the user, sorted. */
export function userVariablesOf(template: NucleiTemplate): string[] {
  const { names, blockIds } = blockNames(template);
  const builtin = (name: string) =>
    RESERVED_VARIABLE_NAMES.has(name) ||
    RANDSTR.test(name) ||
    Object.hasOwn(template.constants, name) ||
    names.has(name) ||
    blockIds.some((id) => name.startsWith(`${id}_`));
  const declared = new Map(template.variables);
  // Template variables that resolve without outside help (fixed point: one may use another declared after it).
  const resolvable = new Set<string>();
  for (let progress = true; progress; ) {
    progress = false;
    for (const [name, value] of declared) {
      if (resolvable.has(name)) continue;
      if (markerVariables(value).every((used) => used !== name && (builtin(used) || resolvable.has(used)))) {
        resolvable.add(name);
        progress = true;
      }
    }
  }
  const needed = new Set<string>();
  const visit = (name: string, seen: Set<string>) => {
    if (builtin(name) || resolvable.has(name) || seen.has(name)) return;
    seen.add(name);
    const value = declared.get(name);
    // A declared variable that cannot resolve: what it uses is needed, and itself when it refers to itself.
    if (value === undefined) needed.add(name);
    else for (const used of markerVariables(value)) used === name ? needed.add(name) : visit(used, seen);
  };
  for (const text of sentTexts(template)) for (const name of markerVariables(text)) visit(name, new Set());
  return [...needed].sort();
}

/**
 * The template as it runs with these user values: with the values it asks for (and those replacing its variables
 * of the same name) as constants, or skipped with the names that no value was given for.
 */
export function withUserVariables(template: NucleiTemplate, values: Readonly<Record<string, string>>): NucleiTemplate {
  if (template.skip) return template;
  const needed = userVariablesOf(template);
  const missing = needed.filter((name) => !Object.hasOwn(values, name));
  if (missing.length) {
    return { ...template, skip: `missing variable${missing.length > 1 ? 's' : ''} ${missing.map((name) => `{{${name}}}`).join(', ')}` };
  }
  const given: Record<string, string> = {};
  for (const name of needed) given[name] = values[name]!;
  for (const [name] of template.variables) if (Object.hasOwn(values, name)) given[name] = values[name]!;
  if (!Object.keys(given).length) return template;
  // Constants win over template variables in every runner's scope; the template's own constants stay.
  return { ...template, constants: { ...given, ...template.constants } };
}

/**
 * The parser's warnings without those about variables the user can give (the names are reported as what the
 * template needs instead: it runs faithfully once they are given), and those names. A warning naming a variable
 * that is not a user variable (a later block extracts it, say) stays.
 */
export function separateUserVariables(template: NucleiTemplate, warnings: readonly TemplateIssue[]): { warnings: TemplateIssue[]; userVariables: string[] } {
  const userVariables = userVariablesOf(template);
  const needed = new Set(userVariables);
  const kept = warnings.filter((issue) => !unknownVariablesOfWarning(issue)?.every((name) => needed.has(name)));
  return { warnings: kept, userVariables };
}

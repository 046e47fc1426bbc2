/**
 * Variables a block sends that nothing in the template provides: nuclei refuses to send such a request
 * ("unresolved variables"), unless the user gives the value (`-var name=value`). One check and one warning text for
 * http, network, dns and ssl blocks, so the template registry can tell these warnings apart from the others and
 * report the names as what the template needs from the user (user-variables.ts) rather than as something the
 * engine does not run.
 */
import type { TemplateIssue } from '../types.js';
import type { Ctx, Seg } from './context.js';
import { markerVariables } from './dsl.js';

/** Names the engine makes up per request; never unknown. */
const ALWAYS_PROVIDED = /^(randstr(_\d+)?|interactsh-url)$/;

/** The variables used in `texts` that `provided` does not know, in order of first use. */
export function unknownVariablesIn(texts: readonly string[], provided: (name: string) => boolean): string[] {
  const unknown = new Set<string>();
  for (const text of texts) for (const name of markerVariables(text)) if (!ALWAYS_PROVIDED.test(name) && !provided(name)) unknown.add(name);
  return [...unknown];
}

const PREFIX = 'unknown variable';

/** Warns that these variables are not provided: requests using them are skipped unless a value comes from elsewhere. */
export function warnUnknownVariables(ctx: Ctx, names: readonly string[], segs: Seg[], protocol: string): void {
  if (!names.length) return;
  const many = names.length > 1;
  const them = many ? 'them' : 'it';
  ctx.warn(
    `${PREFIX}${many ? 's' : ''} ${names.map((name) => `{{${name}}}`).join(', ')} in ${protocol} requests; requests using ${them} are skipped unless an earlier request extracts ${them} or the user gives ${many ? 'values' : 'a value'}`,
    segs,
  );
}

/** The names of a warning made by warnUnknownVariables; undefined for any other warning. */
export function unknownVariablesOfWarning(issue: Pick<TemplateIssue, 'message'>): string[] | undefined {
  if (!issue.message.startsWith(PREFIX)) return undefined;
  const list = /^unknown variables? ((?:\{\{[^}]*\}\}(?:, )?)+) in /.exec(issue.message)?.[1];
  return list ? [...list.matchAll(/\{\{([^}]*)\}\}/g)].map((match) => match[1]!) : undefined;
}

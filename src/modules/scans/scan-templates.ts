import type { AppDeps } from '../../context.js';
import { SecretBoxError } from '../../crypto/secret-box.js';
import { withUserVariables } from '../../scanner/nuclei/index.js';
import { OAST_NOT_CONFIGURED, withoutOast } from '../../scanner/nuclei/oast.js';
import type { RunnableTemplate } from '../../scanner/nuclei/run-on-web.js';
import { loadScanTemplates } from '../templates/loader.js';
import { openVariables } from '../templates/variables.js';
import { templateRunSettingsOf } from '../workspaces/template-settings.js';
import type { ScanOptions } from './schemas.js';
import { MASK } from '../workspaces/template-settings.js';

/** The workspace's or the scan's sealed variables no longer open: the instance secret changed. Permanent. */
export class TemplateVariablesUnreadable extends Error {
  override name = 'TemplateVariablesUnreadable';
}

/**
 * What a scan's checks step runs: the workspace's templates chosen by its selection and the scan's, each given
 * the template variables it asks for (the scan's values win over the workspace's), or skipped with the names of
 * those it lacks (src/scanner/nuclei/user-variables.ts). Without an OAST client (`oastSkip` says why: OAST_DOMAIN
 * unset, or no way to the listeners) templates using `{{interactsh-url}}` or interactsh matchers are skipped.
 */
export async function templatesForScan(
  deps: Pick<AppDeps, 'prisma' | 'storage' | 'log' | 'secrets'>,
  scan: { workspaceId: string; options: ScanOptions; templateVariables: unknown },
  runtime: { oastSkip?: string } = { oastSkip: OAST_NOT_CONFIGURED },
): Promise<{ templates: RunnableTemplate[]; variables: Record<string, string> }> {
  let settings: Awaited<ReturnType<typeof templateRunSettingsOf>>;
  let own: Record<string, string>;
  try {
    settings = await templateRunSettingsOf(deps.prisma, deps.secrets, scan.workspaceId);
    own = openVariables(deps.secrets, scan.templateVariables);
  } catch (error) {
    if (!(error instanceof SecretBoxError)) throw error;
    throw new TemplateVariablesUnreadable(`template variables cannot be decrypted (the instance secret changed since they were saved): set them again`);
  }
  const values = { ...settings.variables, ...own };
  const templates = await loadScanTemplates(deps, scan.workspaceId, { workspace: settings.selection, scan: scan.options.templateSelection });
  const { oastSkip } = runtime;
  const runnable = (template: RunnableTemplate['template']) => withUserVariables(oastSkip ? withoutOast(template, oastSkip) : template, values);
  return { templates: templates.map(({ template }) => ({ template: runnable(template) })), variables: values };
}

/** Shorter values are left alone: masking every `ab` in evidence would hide more than it protects. */
const MIN_MASKED_LENGTH = 3;

/**
 * The checks step's output with every template variable value masked in what quotes the traffic — each
 * finding's evidence (url, request and response excerpts, extracted values) and each error's message — as typed
 * and in the forms requests carry it (URL- and form-encoded, base64): findings would otherwise hold the token or
 * password the template sent. Keys, names and fingerprints are left alone, so findings still dedupe.
 */
export function withoutVariableValues<T>(output: T, values: readonly string[]): T {
  const forms = new Set<string>();
  for (const value of values) {
    if (value.length < MIN_MASKED_LENGTH) continue;
    forms.add(value);
    forms.add(encodeURIComponent(value));
    forms.add(new URLSearchParams({ v: value }).toString().slice(2));
    forms.add(Buffer.from(value).toString('base64'));
  }
  const checks = output as { findings?: { evidence?: unknown }[]; errors?: { message: string }[] } | undefined;
  if (!forms.size || !checks?.findings) return output;
  // Longest first: a value containing another is masked whole.
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  const mask = (text: string) => ordered.reduce((masked, form) => masked.split(form).join(MASK), text);
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return mask(node);
    if (Array.isArray(node)) return node.map(walk);
    if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value)]));
    return node;
  };
  return {
    ...checks,
    findings: checks.findings.map((finding) => ({ ...finding, evidence: walk(finding.evidence) })),
    errors: (checks.errors ?? []).map((error) => ({ ...error, message: mask(error.message) })),
  } as T;
}

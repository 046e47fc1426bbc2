import type { AppDeps } from '../../context.js';
import { SecretBoxError } from '../../crypto/secret-box.js';
import { withUserVariables } from '../../scanner/nuclei/user-variables.js';
import type { RunnableTemplate } from '../../scanner/nuclei/run-on-web.js';
import { loadScanTemplates } from '../templates/loader.js';
import { openVariables } from '../templates/variables.js';
import { templateRunSettingsOf } from '../workspaces/template-settings.js';
import type { ScanOptions } from './schemas.js';

/** The workspace's or the scan's sealed variables no longer open: the instance secret changed. Permanent. */
export class TemplateVariablesUnreadable extends Error {
  override name = 'TemplateVariablesUnreadable';
}

/**
 * What a scan's checks step runs: the workspace's templates chosen by its selection and the scan's, each given
 * the template variables it asks for (the scan's values win over the workspace's), or skipped with the names of
 * those it lacks (src/scanner/nuclei/user-variables.ts).
 */
export async function templatesForScan(
  deps: Pick<AppDeps, 'prisma' | 'storage' | 'log' | 'secrets'>,
  scan: { workspaceId: string; options: ScanOptions; templateVariables: unknown },
): Promise<RunnableTemplate[]> {
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
  return templates.map(({ template }) => ({ template: withUserVariables(template, values) }));
}

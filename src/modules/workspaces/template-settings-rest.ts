import { z } from 'zod';
import { signedInProcedure } from '../../rest/procedures.js';
import { dateTime, uuidParam } from '../../rest/schemas.js';
import { templateSelectionInput } from '../templates/selection.js';
import * as settings from './template-settings.js';

const tags = ['Workspaces'];

const settingsSchema = z
  .object({
    workspaceId: z.string(),
    selection: templateSelectionInput,
    variables: z
      .record(z.string(), z.string())
      .meta({ description: `Template variable names, each value masked as "${settings.MASK}" (values are stored encrypted and never returned).` }),
    updatedAt: dateTime.nullable().meta({ description: 'Null until the settings are first saved.' }),
  })
  .meta({ id: 'TemplateSettings' });

/** A workspace's template settings (which templates its scans run, the variables they get); spread into the workspaces router. */
export const templateSettingsProcedures = {
  getTemplateSettings: signedInProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/workspaces/{id}/template-settings',
        tags,
        summary: "The workspace's template selection and template variables, values masked (members)",
      },
    })
    .input(z.object({ id: uuidParam }).strict())
    .output(settingsSchema)
    .query(({ ctx, input }) => settings.getTemplateSettings(ctx.svc, input.id)),

  updateTemplateSettings: signedInProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/workspaces/{id}/template-settings',
        tags,
        summary: 'Replace the template selection and/or set (string), unset (null) or keep (the mask) template variables (owners)',
      },
    })
    .input(settings.templateSettingsBody.extend({ id: uuidParam }))
    .output(settingsSchema)
    .mutation(({ ctx, input: { id, ...patch } }) => settings.updateTemplateSettings(ctx.svc, id, patch)),
};

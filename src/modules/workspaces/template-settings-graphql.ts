import { builder } from '../../graphql/builder.js';
import { decodeId } from '../../graphql/ids.js';
import { TemplateSelectionInput, TemplateSelectionRef, TemplateVariableInput, variablesRecord } from '../templates/selection-graphql.js';
import { withoutNulls } from '../scans/graphql.js';
import { WorkspaceRef } from './graphql.js';
import * as settings from './template-settings.js';

const TemplateVariableRef = builder.objectRef<{ name: string; value: string }>('TemplateVariable').implement({
  description: 'A template variable of the workspace: its name, and its value masked (values are stored encrypted and never returned).',
  fields: (t) => ({
    name: t.exposeString('name'),
    value: t.exposeString('value', { description: `Always "${settings.MASK}".` }),
  }),
});

const TemplateSettingsRef = builder.objectRef<settings.TemplateSettingsResponse>('TemplateSettings').implement({
  description: "What a workspace's scans do with templates: which ones run, and the template variables they get.",
  fields: (t) => ({
    selection: t.field({ type: TemplateSelectionRef, resolve: (row) => row.selection }),
    variables: t.field({
      type: [TemplateVariableRef],
      description: 'Names sorted, values masked.',
      resolve: (row) => Object.entries(row.variables).map(([name, value]) => ({ name, value })),
    }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', nullable: true, description: 'Null until the settings are first saved.' }),
  }),
});

builder.objectField(WorkspaceRef, 'templateSettings', (t) =>
  t.loadable({
    type: TemplateSettingsRef,
    description: 'Template selection and variables (values masked). One query for every workspace of a list.',
    // The parent is a workspace the caller can see (every lookup applies the visibility rule).
    load: (ids: string[], ctx) => settings.templateSettingsOfWorkspaces(ctx, ids),
    resolve: (workspace) => workspace.id,
  }),
);

const TemplateSettingsInput = builder.inputType('TemplateSettingsInput', {
  description: 'At least one of selection (replaces the stored one) and variables (each named one set, unset or kept; others stay).',
  fields: (t) => ({
    selection: t.field({ type: TemplateSelectionInput }),
    variables: t.field({ type: [TemplateVariableInput], description: `A value sets, null unsets, "${settings.MASK}" keeps; at most 100 in all.` }),
  }),
});

builder.mutationFields((t) => ({
  updateTemplateSettings: t.field({
    type: TemplateSettingsRef,
    errors: {},
    description: "Replaces the workspace's template selection and/or sets and unsets its template variables (whoever may update the workspace).",
    args: { workspaceId: t.arg.id({ required: true }), input: t.arg({ type: TemplateSettingsInput, required: true }) },
    resolve: (_root, { workspaceId, input }, ctx) =>
      settings.updateTemplateSettings(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), {
        selection: input.selection ? withoutNulls(input.selection) : undefined,
        variables: variablesRecord(input.variables),
      }),
  }),
}));

import { builder } from '../../graphql/builder.js';
import * as systemConfigs from './service.js';

const SystemConfigRef = builder.objectRef<systemConfigs.SystemConfigView>('SystemConfig').implement({
  description: 'Instance-wide settings: the name and logo shown on every page.',
  fields: (t) => ({
    name: t.exposeString('name'),
    logoPath: t.exposeString('logoPath', { nullable: true, description: 'An http(s) URL, a path starting with /, or a stored logo key (logos/…).' }),
    logoUrl: t.exposeString('logoUrl', {
      nullable: true,
      description: 'What a browser loads: the logo route for an uploaded logo, the path or URL itself otherwise.',
    }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    updatedBy: t.exposeString('updatedBy', { nullable: true, description: 'User id of the administrator who last changed it.' }),
  }),
});

const PublicSystemConfigRef = builder.objectRef<systemConfigs.PublicSystemConfig>('PublicSystemConfig').implement({
  description: 'What a login page shows; readable without an account.',
  fields: (t) => ({
    name: t.exposeString('name'),
    logoUrl: t.exposeString('logoUrl', { nullable: true }),
  }),
});

builder.queryFields((t) => ({
  systemConfig: t.field({
    type: SystemConfigRef,
    description: 'The system configuration (instance administrators).',
    resolve: (_root, _args, ctx) => systemConfigs.getSystemConfig(ctx),
  }),
  publicSystemConfig: t.field({
    type: PublicSystemConfigRef,
    description: 'Name and logo URL for login pages (no authentication).',
    resolve: (_root, _args, ctx) => systemConfigs.getPublicSystemConfig(ctx),
  }),
}));

builder.mutationFields((t) => ({
  updateSystemConfig: t.field({
    type: SystemConfigRef,
    errors: {},
    description: 'Instance administrators. An argument left out stays as it is; logoPath: null clears the logo.',
    args: { name: t.arg.string(), logoPath: t.arg.string() },
    resolve: (_root, args, ctx) =>
      systemConfigs.updateSystemConfig(ctx, {
        // name: null is "leave it", like an absent name; logoPath: null clears.
        ...(args.name != null ? { name: args.name } : {}),
        ...(args.logoPath !== undefined ? { logoPath: args.logoPath } : {}),
      }),
  }),
  uploadSystemLogo: t.field({
    type: SystemConfigRef,
    errors: {},
    description: 'Instance administrators. PNG, JPEG, GIF or WebP, at most 512 KiB decoded, matching contentType; SVG is refused.',
    args: { contentType: t.arg.string({ required: true }), dataBase64: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => systemConfigs.uploadLogo(ctx, args),
  }),
}));

import type { CodegenConfig } from '@graphql-codegen/cli';

/** Typed documents for the tests: `graphql(...)` from test/gql returns a TypedDocumentNode. */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['test/**/*.ts', '!test/gql/**'],
  ignoreNoDocuments: true,
  // NodeNext resolution wants explicit extensions.
  importExtension: '.js',
  generates: {
    'test/gql/': {
      preset: 'client',
      config: { useTypeImports: true, enumsAsTypes: true },
      presetConfig: { fragmentMasking: false },
    },
  },
};

export default config;

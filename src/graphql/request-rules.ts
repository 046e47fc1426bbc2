import { GraphQLError, Kind, NoSchemaIntrospectionCustomRule, TypeInfo, validate, visit, visitWithTypeInfo } from 'graphql';
import type { DocumentNode, ExecutionArgs, FieldNode, GraphQLSchema, ValueNode } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { ServiceContext } from '../context.js';

/**
 * Operations arrive as `application/json` POSTs, or as GET for queries (yoga refuses mutations over GET).
 * Form-encoded, multipart and text/plain bodies are what a page on another site can POST without a CORS
 * preflight, with the user's cookie attached: refused before parsing, so no operation runs from them
 * (see src/http/cors.ts for the whole cross-site policy).
 */
export function useJsonOperationsOnly(): Plugin {
  return {
    onRequestParse({ request }) {
      if (request.method !== 'POST') return;
      const mediaType = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
      if (mediaType === 'application/json') return;
      throw createGraphQLError('Send GraphQL operations as application/json (or queries as GET)', {
        extensions: { http: { status: 415 }, code: 'UNSUPPORTED_MEDIA_TYPE' },
      });
    },
  };
}

function stop(setResult: (result: { errors: GraphQLError[] }) => void, errors: readonly GraphQLError[]): void {
  setResult({ errors: [...errors] });
}

/**
 * Introspection (`__schema`, `__type`) for anonymous callers only when allowed; signed-in users may always
 * introspect. Checked at execution, where the viewer is known (validation runs before the context is built).
 */
export function useAnonymousIntrospection(allowed: boolean): Plugin<Record<string, unknown>, ServiceContext> {
  const check = (args: ExecutionArgs, setResult: (result: { errors: GraphQLError[] }) => void) => {
    if (allowed || (args.contextValue as ServiceContext).viewer) return;
    const errors = validate(args.schema, args.document, [NoSchemaIntrospectionCustomRule]);
    if (!errors.length) return;
    stop(
      setResult,
      errors.map((error) => new GraphQLError('Introspection requires signing in', { nodes: error.nodes, extensions: { code: 'UNAUTHENTICATED' } })),
    );
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}

interface NodesField {
  field: FieldNode;
  ids: ValueNode | undefined;
}

/**
 * The `nodes(ids:)` fields of a document (on the query type, fragments included), found once per parsed
 * document: yoga's parser cache hands the same DocumentNode to every request with the same text, and walking
 * the whole document with type information on each request cost a few percent of a small query's CPU.
 */
const nodesFieldsCache = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, NodesField[]>>();

function nodesFieldsOf(schema: GraphQLSchema, document: DocumentNode): NodesField[] {
  let bySchema = nodesFieldsCache.get(schema);
  if (!bySchema) {
    bySchema = new WeakMap();
    nodesFieldsCache.set(schema, bySchema);
  }
  const cached = bySchema.get(document);
  if (cached) return cached;
  const found: NodesField[] = [];
  const queryType = schema.getQueryType();
  if (queryType?.getFields().nodes) {
    const typeInfo = new TypeInfo(schema);
    visit(
      document,
      visitWithTypeInfo(typeInfo, {
        Field(node) {
          if (node.name.value !== 'nodes' || typeInfo.getParentType() !== queryType) return;
          found.push({ field: node, ids: node.arguments?.find((argument) => argument.name.value === 'ids')?.value });
        },
      }),
    );
  }
  bySchema.set(document, found);
  return found;
}

/**
 * `nodes(ids:)` looks up every id it is given: more than `max` is refused before any resolver runs. The
 * count includes ids passed as a variable, which validation cannot see, so it is checked at execution.
 */
export function useNodesLimit(max: number): Plugin {
  const check = (args: ExecutionArgs, setResult: (result: { errors: GraphQLError[] }) => void) => {
    const errors: GraphQLError[] = [];
    for (const { field, ids } of nodesFieldsOf(args.schema, args.document)) {
      let count = 0;
      if (ids?.kind === Kind.LIST) count = ids.values.length;
      else if (ids?.kind === Kind.VARIABLE) {
        const value = args.variableValues?.[ids.name.value];
        count = Array.isArray(value) ? value.length : 0;
      }
      if (count > max) {
        errors.push(new GraphQLError(`nodes(ids:) takes at most ${max} ids, got ${count}`, { nodes: [field], extensions: { code: 'BAD_USER_INPUT' } }));
      }
    }
    if (errors.length) stop(setResult, errors);
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}

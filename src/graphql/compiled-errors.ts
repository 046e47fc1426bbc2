import { getLocation, GraphQLError, Kind, visit, type ASTNode, type DocumentNode, type ExecutionResult } from 'graphql';

/**
 * graphql-jit reports errors in its own GraphQLError: a location instead of the AST nodes, and no extensions
 * object when the original error has none. Everything after execution (our masking, yoga's serialisation, which
 * rebuilds each error from its nodes) expects graphql-js's errors, so a compiled result's errors are rebuilt as
 * graphql-js would have raised them: the same message, path, original error and extensions, and the nodes of the
 * document at the reported locations. Only results with errors pay for it.
 */
export function withGraphQLJsErrors(result: ExecutionResult, document: DocumentNode): ExecutionResult {
  if (!result.errors?.length) return result;
  let nodesAt: Map<string, ASTNode> | undefined;
  const errors = result.errors.map((error) => {
    nodesAt ??= nodesByLocation(document);
    const nodes = (error.locations ?? []).map(({ line, column }) => nodesAt!.get(`${line}:${column}`)).filter((node) => node !== undefined);
    return new GraphQLError(error.message, {
      nodes: nodes.length ? nodes : undefined,
      path: error.path,
      originalError: error.originalError ?? undefined,
      extensions: error.extensions,
    });
  });
  return { ...result, errors };
}

/** The document's fields, fragment spreads and operation by the line and column they start at. */
function nodesByLocation(document: DocumentNode): Map<string, ASTNode> {
  const nodes = new Map<string, ASTNode>();
  const remember = (node: ASTNode) => {
    if (!node.loc) return;
    const { line, column } = getLocation(node.loc.source, node.loc.start);
    const key = `${line}:${column}`;
    if (!nodes.has(key)) nodes.set(key, node);
  };
  visit(document, {
    [Kind.OPERATION_DEFINITION]: remember,
    [Kind.FIELD]: remember,
    [Kind.FRAGMENT_SPREAD]: remember,
    [Kind.INLINE_FRAGMENT]: remember,
    [Kind.VARIABLE_DEFINITION]: remember,
  });
  return nodes;
}

import { GraphQLError, visit, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { inputProblem } from '../rest/inspect-input.js';
import type { AppError } from '../errors.js';

/** Per parsed document (yoga's parser cache reuses it for the same text): a walk of the whole document per request is not free. */
const nulLiterals = new WeakMap<DocumentNode, boolean>();

/** A NUL character in a string literal of the document (PostgreSQL cannot store it in text). */
function literalWithNul(document: DocumentNode): boolean {
  const cached = nulLiterals.get(document);
  if (cached !== undefined) return cached;
  let found = false;
  visit(document, {
    StringValue(node) {
      if (node.value.includes('\u0000')) found = true;
    },
  });
  nulLiterals.set(document, found);
  return found;
}

function toGraphQLError(problem: AppError): GraphQLError {
  return new GraphQLError(problem.message, { extensions: { code: problem.code, ...(problem.details ? { details: problem.details } : {}) } });
}

/**
 * The REST edge's well-formedness checks (rest/inspect-input.ts) for GraphQL, over HTTP and the websocket:
 * variables or literals with a NUL character, or variables nested too deep, are the client's mistake (an
 * error with code VALIDATION_FAILED or BAD_REQUEST), not a database failure masked as INTERNAL.
 */
export function refuseMalformedInput(): Plugin {
  const check = (document: DocumentNode, variables: unknown): GraphQLError | null => {
    const problem = inputProblem(variables ?? {});
    if (problem) return toGraphQLError(problem);
    return literalWithNul(document)
      ? new GraphQLError('Invalid input: a string literal must not contain NUL characters (\\u0000)', { extensions: { code: 'VALIDATION_FAILED' } })
      : null;
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const error = check(args.document, args.variableValues);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = check(args.document, args.variableValues);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}

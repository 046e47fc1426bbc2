/**
 * A safe evaluator for the nuclei DSL (govaluate syntax + nuclei helper functions).
 *
 * Hand-written tokenizer, recursive-descent parser and tree-walking evaluator: no `eval`, no `new Function`,
 * no access to JavaScript objects. Values are strings, numbers, booleans, null and arrays.
 *
 * Semantics follow govaluate as used by nuclei:
 *  - strings in '...' or "..." — a backslash makes the next character literal (`'\''`), there are no other escapes
 *  - `+` adds numbers and concatenates as soon as one side is a string; `== !=` are type-strict (200 != "200")
 *  - `< <= > >=` compare two numbers or two strings; `&& || !` need booleans; `=~ !~` match a Go regex
 *  - `? :` ternary, `??` coalesce, `in` against a parenthesised list, `**`, `%`, bitwise operators
 *  - a missing variable is an evaluation error (`No parameter 'x' found.`), which matchers treat as "false"
 * Strings are byte strings in the bytes.ts sense: hashing, base64, `len()` work on the UTF-8 bytes.
 */
export { DslEvalError, DslSyntaxError, type DslNode, type DslScope, type DslValue } from './ast.js';
export { evaluateDsl, evaluateExpression, scopeOf, type DslRecord } from './evaluate.js';
export { isKnownFunction, knownFunctionNames, setDslDebugSink, type DslDebugSink } from './helpers/index.js';
export { findMarkers, renderMarkers, type Marker, type RenderResult } from './markers.js';
export { parseDsl, type ParsedDsl } from './parser.js';
export { dslToString } from './values.js';

/** The nuclei DSL's values, syntax tree and errors (see dsl/index.ts for the semantics). */

export type DslValue = string | number | boolean | null | DslValue[];

export type DslNode =
  | { k: 'lit'; v: DslValue }
  | { k: 'var'; name: string }
  | { k: 'unary'; op: '!' | '-' | '~'; arg: DslNode }
  | { k: 'bin'; op: string; l: DslNode; r: DslNode }
  | { k: 'tern'; c: DslNode; t: DslNode; f?: DslNode }
  | { k: 'call'; name: string; args: DslNode[] }
  | { k: 'arr'; items: DslNode[] };

export interface DslScope {
  get(name: string): DslValue | undefined;
}

export class DslSyntaxError extends Error {}

export class DslEvalError extends Error {
  constructor(
    message: string,
    readonly missingVariable?: string,
  ) {
    super(message);
  }
}

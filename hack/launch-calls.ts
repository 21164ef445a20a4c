// The calls in a script that start a process or a worker, each judged on its own:
// does it start the server (its entry point, the bench's server host, or the script
// itself when that script runs the server in process), and does it give that process
// the server's node flags (pkg/server/node-flags.ts)? hack/launchers.test.ts runs it
// over hack/ and e2e/. Judging a whole file (it starts the server somewhere and names
// the flags somewhere) let a second launch without them pass beside a first with them.
//
// Scripts are parsed with the TypeScript compiler (syntax only: a type checker per
// file costs seconds over hack/ and e2e/, and only scopes are needed). A launch is a
// call whose callee is child_process's spawn, fork, exec or execFile (or their Sync
// forms), however it was imported (named, renamed, namespace, default, `require`,
// promisified), or a `new Worker(...)`. A call's arguments are read with what their
// identifiers were declared as in the scope the call is in (the nearest enclosing
// declaration, a few levels deep), so `spawn(process.execPath, [main])` is known to
// start the server, and one function's `args` is never read for another's; a declared
// list is read with what `push` and `unshift` add to it before the call. The flags
// count only where they reach the child's node: on its command line before the script
// (after it they are the script's arguments), or in the `execArgv` of fork's and a
// worker's options; never in its `env` or other options. It is a reading of the
// source, not an evaluation: a path built somewhere else (a parameter, another module,
// a loop) is not seen, which is why the helpers that build launches (children.ts, the
// harness) are checked on their own in launchers.test.ts.

import ts from 'typescript';

/** A process or worker started somewhere in a script. */
export interface LaunchCall {
  /** 1-based line of the call. */
  readonly line: number;
  /** The call as written (JavaScript) or the command line (shell). */
  readonly text: string;
  /** Whether it starts the server (or a server host). */
  readonly startsServer: boolean;
  /** Whether it gives the started process the server's node flags. */
  readonly carriesFlags: boolean;
  /** A worker thread: V8's heap flags are per process, so no execArgv can give them to it. */
  readonly worker: boolean;
}

/** node:child_process's functions that start a process. */
const CHILD_PROCESS_LAUNCHES = new Set([
  'spawn',
  'spawnSync',
  'fork',
  'exec',
  'execSync',
  'execFile',
  'execFileSync',
]);

/**
 * A launch function named but declared nowhere in the source (a fixture, or a global a
 * script's reader cannot see): judged by its name, promisified ones too.
 */
const UNDECLARED_LAUNCH = /^(?:spawn|fork|exec|execFile)(?:Sync|Async)?$/;

/**
 * A launch function's or a worker's name anywhere in a source: however a launch is
 * imported or renamed, child_process's own name for it is written somewhere.
 */
const LAUNCH_NAMED = /\b(?:spawn|fork|exec|execFile)(?:Sync|Async)?\b|\bWorker\b/;

/** The module specifiers of child_process. */
const CHILD_PROCESS_MODULE = /^(?:node:)?child_process$/;

/**
 * The server as a script: its entry point (as a path or path.join's pieces), or the
 * bench's server host (not etcd3-server-host, a module that starts one with the flags
 * itself).
 */
const SERVER_ENTRY = /cmd['"\s,/]+apiserver['"\s,/]+main\b|(?<!etcd3-)server-host\b/;

/**
 * The script starting itself, named in the call (fork(fileURLToPath(import.meta.url)),
 * process.argv[1]); not through a declaration, where `import.meta.url` is mostly the
 * base of a path to another script.
 */
const SELF = /\bfileURLToPath\(import\.meta\.url\)|\bprocess\.argv\[1\]/;

/** A script that runs the server in its own process (pkg/server's startServer). */
const RUNS_SERVER_IN_PROCESS =
  /\bserver\.startServer\(|\bimport\s*\{[^}]*\bstartServer\b[^}]*\}\s*from\s*['"][./]*pkg\/server\//;

/**
 * What puts the flags on a child's command line: the flags themselves, or the helpers
 * that add them (children.ts's execArgvOf, the harness's serverCommand, which
 * launchers.test.ts checks).
 */
const CARRIES_FLAGS = /\bSERVER_NODE_FLAGS\b|\bexecArgvOf\(|\bserverCommand\(/;

/** The helper that returns the server's command line (e2e/harness.ts): a launch of the server. */
const SERVER_COMMAND = /\bserverCommand\(/;

/** How many declarations deep a call's identifiers are followed. */
const DECLARATION_DEPTH = 3;

/** What an identifier can resolve to: the node that declares its name. */
type Declaration =
  | ts.VariableDeclaration
  | ts.BindingElement
  | ts.ParameterDeclaration
  | ts.ImportSpecifier
  | ts.NamespaceImport
  | ts.ImportClause
  | ts.FunctionDeclaration
  | ts.ClassDeclaration;

/** Where a binding name (an identifier or a destructuring pattern) binds `wanted`: the identifier or the element. */
function binds(name: ts.BindingName, wanted: string): ts.Identifier | ts.BindingElement | undefined {
  if (ts.isIdentifier(name)) return name.text === wanted ? name : undefined;
  for (const element of name.elements) {
    if (ts.isOmittedExpression(element)) continue;
    if (ts.isIdentifier(element.name)) {
      if (element.name.text === wanted) return element;
    } else {
      const inner = binds(element.name, wanted);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** The declaration a variable list makes of `name`, if any. */
function inVariableList(list: ts.VariableDeclarationList, name: string): Declaration | undefined {
  for (const decl of list.declarations) {
    const found = binds(decl.name, name);
    if (found) return ts.isIdentifier(found) ? decl : found;
  }
  return undefined;
}

/** The declaration of `name` among a block's (or a file's) own statements. */
function inStatements(statements: readonly ts.Statement[], name: string): Declaration | undefined {
  for (const s of statements) {
    if (ts.isVariableStatement(s)) {
      const found = inVariableList(s.declarationList, name);
      if (found) return found;
    } else if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) && s.name?.text === name) {
      return s;
    } else if (ts.isImportDeclaration(s) && s.importClause) {
      const clause = s.importClause;
      if (clause.name?.text === name) return clause;
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings) && bindings.name.text === name) return bindings;
      if (bindings && ts.isNamedImports(bindings)) {
        const spec = bindings.elements.find((e) => e.name.text === name);
        if (spec) return spec;
      }
    }
  }
  return undefined;
}

/** The `var`s of each function body (or file) read so far, by name. */
const hoistedVars = new WeakMap<ts.Node, Map<string, Declaration>>();

/**
 * A `var` of `name` declared in a nested block of a function's body (or a file's):
 * `var` belongs to the function, wherever it is written. Nested functions are their
 * own. Each body is walked once (every call's callee is resolved through here).
 */
function hoistedVar(body: ts.Node, name: string): Declaration | undefined {
  let vars = hoistedVars.get(body);
  if (!vars) {
    const found = new Map<string, Declaration>();
    const visit = (n: ts.Node): void => {
      if (n !== body && ts.isFunctionLike(n)) return;
      if (ts.isVariableDeclarationList(n) && !(n.flags & ts.NodeFlags.BlockScoped)) {
        for (const id of n.declarations.flatMap((d) => boundNames(d.name))) {
          const decl = inVariableList(n, id);
          if (decl && !found.has(id)) found.set(id, decl);
        }
      }
      n.forEachChild(visit);
    };
    visit(body);
    vars = found;
    hoistedVars.set(body, vars);
  }
  return vars.get(name);
}

/** The names a binding name binds. */
function boundNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((e) => (ts.isOmittedExpression(e) ? [] : boundNames(e.name)));
}

/** The declaration `scope` itself makes of `name` (its statements, parameters, loop variables). */
function declaredIn(scope: ts.Node, name: string): Declaration | undefined {
  if (ts.isSourceFile(scope)) return inStatements(scope.statements, name) ?? hoistedVar(scope, name);
  if (ts.isBlock(scope) || ts.isModuleBlock(scope)) return inStatements(scope.statements, name);
  if (ts.isCaseClause(scope) || ts.isDefaultClause(scope)) return inStatements(scope.statements, name);
  if (ts.isFunctionLike(scope)) {
    for (const p of scope.parameters) {
      const found = binds(p.name, name);
      if (found) return ts.isIdentifier(found) ? p : found;
    }
    return 'body' in scope && scope.body ? hoistedVar(scope.body, name) : undefined;
  }
  if (
    (ts.isForStatement(scope) || ts.isForOfStatement(scope) || ts.isForInStatement(scope)) &&
    scope.initializer
  ) {
    return ts.isVariableDeclarationList(scope.initializer)
      ? inVariableList(scope.initializer, name)
      : undefined;
  }
  if (ts.isCatchClause(scope) && scope.variableDeclaration) {
    const found = binds(scope.variableDeclaration.name, name);
    if (found) return ts.isIdentifier(found) ? scope.variableDeclaration : found;
  }
  return undefined;
}

/** The declaration of the identifier in scope where it is used: the nearest enclosing one. */
function resolve(id: ts.Identifier): Declaration | undefined {
  for (let scope: ts.Node | undefined = id.parent; scope; scope = scope.parent) {
    const found = declaredIn(scope, id.text);
    if (found) return found;
  }
  return undefined;
}

/** The variable declaration a declaration belongs to (a destructured element's root). */
function rootVariable(decl: Declaration): ts.VariableDeclaration | ts.ParameterDeclaration | undefined {
  let node: ts.Node = decl;
  while (ts.isBindingElement(node) || ts.isObjectBindingPattern(node) || ts.isArrayBindingPattern(node))
    node = node.parent;
  return ts.isVariableDeclaration(node) || ts.isParameter(node) ? node : undefined;
}

/** The value a declaration gives its name, as far as the source shows it. */
function valueOf(decl: Declaration): ts.Expression | undefined {
  if (ts.isBindingElement(decl)) return rootVariable(decl)?.initializer ?? decl.initializer;
  if (ts.isVariableDeclaration(decl) || ts.isParameter(decl)) return decl.initializer;
  return undefined;
}

/** Strips `await`, parentheses and type assertions from an expression. */
function bare(expr: ts.Expression): ts.Expression {
  let e = expr;
  for (;;) {
    if (
      ts.isParenthesizedExpression(e) ||
      ts.isAwaitExpression(e) ||
      ts.isAsExpression(e) ||
      ts.isNonNullExpression(e)
    )
      e = e.expression;
    else return e;
  }
}

/** Whether an expression is a `require('child_process')` or an `import('node:child_process')`. */
function loadsChildProcess(expr: ts.Expression): boolean {
  const e = bare(expr);
  if (!ts.isCallExpression(e)) return false;
  const callee = e.expression;
  const loader =
    callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require');
  const [spec] = e.arguments;
  return loader && spec !== undefined && ts.isStringLiteralLike(spec) && CHILD_PROCESS_MODULE.test(spec.text);
}

/** The module an import declaration's binding comes from. */
function importedFrom(decl: ts.ImportSpecifier | ts.NamespaceImport | ts.ImportClause): string {
  let node: ts.Node = decl;
  while (!ts.isImportDeclaration(node)) node = node.parent;
  return ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier.text : '';
}

/**
 * The member a property or element access names (`cp.spawn`, `cp['spawn']`), or
 * undefined for any other expression.
 */
function memberName(e: ts.Expression): string | undefined {
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  if (ts.isElementAccessExpression(e) && ts.isStringLiteralLike(e.argumentExpression))
    return e.argumentExpression.text;
  return undefined;
}

/**
 * Whether an expression is the child_process module (a namespace or default import, a
 * require, a variable holding one), `depth` aliases deep.
 */
function isChildProcessModule(expr: ts.Expression, depth = DECLARATION_DEPTH): boolean {
  const e = bare(expr);
  if (loadsChildProcess(e)) return true;
  if (!ts.isIdentifier(e)) return false;
  const decl = resolve(e);
  if (!decl) return e.text === 'child_process';
  if (ts.isNamespaceImport(decl) || ts.isImportClause(decl))
    return CHILD_PROCESS_MODULE.test(importedFrom(decl));
  if (ts.isVariableDeclaration(decl) && ts.isIdentifier(decl.name) && decl.initializer && depth > 0)
    return isChildProcessModule(decl.initializer, depth - 1);
  return false;
}

/**
 * The child_process function a callee is (`spawn`, `fork`, ...), or undefined when it
 * is no launch. `depth` bounds the aliases followed (`const run = promisify(execFile)`).
 */
function launchFunction(callee: ts.Expression, depth = DECLARATION_DEPTH): string | undefined {
  const e = bare(callee);
  const member = memberName(e);
  if (member !== undefined) {
    const owner = (e as ts.PropertyAccessExpression | ts.ElementAccessExpression).expression;
    return CHILD_PROCESS_LAUNCHES.has(member) && isChildProcessModule(owner) ? member : undefined;
  }
  if (ts.isCallExpression(e) && isPromisify(e.expression)) {
    const [inner] = e.arguments;
    return inner && depth > 0 ? launchFunction(inner, depth - 1) : undefined;
  }
  if (!ts.isIdentifier(e)) return undefined;
  const decl = resolve(e);
  if (!decl) return UNDECLARED_LAUNCH.test(e.text) ? e.text.replace(/Async$/, '') : undefined;
  if (ts.isImportSpecifier(decl)) {
    const name = (decl.propertyName ?? decl.name).text;
    return CHILD_PROCESS_LAUNCHES.has(name) && CHILD_PROCESS_MODULE.test(importedFrom(decl))
      ? name
      : undefined;
  }
  if (ts.isBindingElement(decl)) {
    const root = rootVariable(decl);
    const key = decl.propertyName ?? decl.name;
    const name = ts.isIdentifier(key) || ts.isStringLiteral(key) ? key.text : '';
    return CHILD_PROCESS_LAUNCHES.has(name) && root?.initializer && isChildProcessModule(root.initializer)
      ? name
      : undefined;
  }
  if (ts.isVariableDeclaration(decl) && decl.initializer && depth > 0)
    return launchFunction(decl.initializer, depth - 1);
  return undefined;
}

/** Whether a callee is util's promisify (`promisify`, `util.promisify`). */
function isPromisify(callee: ts.Expression): boolean {
  const e = bare(callee);
  return (
    (ts.isIdentifier(e) && e.text === 'promisify') ||
    (ts.isPropertyAccessExpression(e) && e.name.text === 'promisify')
  );
}

/** Whether a node is a worker thread's construction (`new Worker(...)`, `new threads.Worker(...)`). */
function isWorker(node: ts.Node): node is ts.NewExpression {
  if (!ts.isNewExpression(node)) return false;
  const e = node.expression;
  return (
    (ts.isIdentifier(e) && e.text === 'Worker') ||
    (ts.isPropertyAccessExpression(e) && e.name.text === 'Worker')
  );
}

/** Each file's `name.push(...)` and `name.unshift(...)` calls, in source order. */
const growths = new WeakMap<ts.SourceFile, ts.CallExpression[]>();

/** A file's `name.push(...)` and `name.unshift(...)` calls, in source order (walked once). */
function listGrowths(file: ts.SourceFile): readonly ts.CallExpression[] {
  let found = growths.get(file);
  if (!found) {
    const calls: ts.CallExpression[] = [];
    const visit = (n: ts.Node): void => {
      if (
        ts.isCallExpression(n) &&
        ts.isPropertyAccessExpression(n.expression) &&
        ts.isIdentifier(n.expression.expression) &&
        (n.expression.name.text === 'push' || n.expression.name.text === 'unshift')
      ) {
        calls.push(n);
      }
      n.forEachChild(visit);
    };
    visit(file);
    found = calls;
    growths.set(file, found);
  }
  return found;
}

/** Whether an identifier is used as a value (not a property's or a member's name). */
function isValueUse(id: ts.Identifier): boolean {
  const p = id.parent;
  if (ts.isPropertyAccessExpression(p) || ts.isPropertyAssignment(p) || ts.isMethodDeclaration(p))
    return p.name !== id;
  return !(ts.isBindingElement(p) && p.propertyName === id);
}

/**
 * How a call's arguments are read: their source text in order, each identifier followed
 * by the value it was declared with in scope (`main⟨join(..., 'main.js')⟩`), a few
 * levels deep, so what comes first on the child's command line comes first in the
 * reading; options objects are cut down to what reaches the child's node.
 */
class ArgumentReader {
  /** The declarations being read, so a value naming itself is not read forever. */
  private readonly reading = new Set<Declaration>();

  /**
   * @param source the file's text
   * @param file the parsed file
   * @param execArgv whether an options object's `execArgv` reaches the child's node
   *   (fork, Worker); no other option does (`env` never: node reads no flags from it).
   * @param before where the call starts: what the script adds to a list after it is not
   *   on that call's command line.
   */
  constructor(
    private readonly source: string,
    private readonly file: ts.SourceFile,
    private readonly execArgv: boolean,
    private readonly before: number,
  ) {}

  /** A node's source text with the declared values of its identifiers, `depth` levels deep. */
  read(node: ts.Node, depth = DECLARATION_DEPTH): string {
    if (ts.isObjectLiteralExpression(node))
      return `{ ${this.kept(node)
        .map((p) => this.read(p, depth))
        .join(', ')} }`;
    if (ts.isIdentifier(node)) return node.text + this.valueRead(node, depth);
    let out = '';
    let pos = node.getStart(this.file);
    node.forEachChild((child) => {
      const start = child.getStart(this.file);
      out += this.source.slice(pos, start) + this.read(child, depth);
      pos = child.end;
    });
    return out + this.source.slice(pos, node.end);
  }

  /** `⟨value⟩` for an identifier used as a value whose declaration in scope gives one. */
  private valueRead(id: ts.Identifier, depth: number): string {
    if (depth <= 0 || !isValueUse(id)) return '';
    const decl = resolve(id);
    const value = decl && valueOf(decl);
    if (!decl || !value || this.reading.has(decl)) return '';
    this.reading.add(decl);
    const { front, back } = this.growthOf(decl, value);
    const read = [...front, value, ...back].map((n) => this.read(n, depth - 1)).join(', ');
    this.reading.delete(decl);
    return `⟨${read}⟩`;
  }

  /**
   * What the script adds to a declared list before the call, in command-line order:
   * `args.unshift(...)` at its front (the last call first), `args.push(...)` at its
   * back, as the e2e harness builds its arguments.
   */
  private growthOf(
    decl: Declaration,
    value: ts.Expression,
  ): { front: ts.Expression[]; back: ts.Expression[] } {
    const front: ts.Expression[] = [];
    const back: ts.Expression[] = [];
    if (!ts.isArrayLiteralExpression(bare(value))) return { front, back };
    for (const call of listGrowths(this.file)) {
      if (call.end > this.before) break;
      const access = call.expression as ts.PropertyAccessExpression;
      if (resolve(access.expression as ts.Identifier) !== decl) continue;
      if (access.name.text === 'push') back.push(...call.arguments);
      else front.unshift(...call.arguments);
    }
    return { front, back };
  }

  /** The properties of an options object that reach the child's node. */
  private kept(obj: ts.ObjectLiteralExpression): ts.ObjectLiteralElementLike[] {
    if (!this.execArgv) return [];
    return obj.properties.filter(
      (p) =>
        ts.isSpreadAssignment(p) ||
        ((ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) &&
          (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) &&
          p.name.text === 'execArgv'),
    );
  }
}

/** The value an argument is, through the identifier it names, if the source shows it. */
function argumentValue(arg: ts.Expression): ts.Expression | undefined {
  const e = bare(arg);
  if (!ts.isIdentifier(e)) return e;
  const decl = resolve(e);
  return decl && valueOf(decl);
}

/**
 * The arguments of a launch that hold the child's node flags: for fork and a worker,
 * their options (the last argument, when it is no list of the script's own arguments),
 * whose execArgv is node's; for the others, every argument (the command, its arguments),
 * in order.
 */
function flagArguments(args: readonly ts.Expression[], execArgv: boolean): readonly ts.Expression[] {
  if (!execArgv) return args;
  const last = args.length > 1 ? args[args.length - 1] : undefined;
  const value = last && argumentValue(last);
  return last && value && ts.isObjectLiteralExpression(bare(value)) ? [last] : [];
}

/** Where a pattern first matches a text; Infinity when it does not. */
function firstAt(pattern: RegExp, text: string): number {
  const at = text.search(pattern);
  return at < 0 ? Infinity : at;
}

/**
 * The source with its comment lines blanked (a line starting `//`, `/*` or `*`), for
 * the whole-file test of running the server in process: a comment that shows an import
 * is not one.
 */
function withoutCommentLines(source: string): string {
  return source.replace(/^[ \t]*(?:\/\/|\/\*|\*).*$/gm, '');
}

/** How a file's name tells the parser its language. */
function scriptKind(file: string): ts.ScriptKind {
  return /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
}

/**
 * The launches in a JavaScript or TypeScript source (`file` names its language). A
 * source whose text names no server entry, no serverCommand and does not run the server
 * in process starts no server, whatever it launches, and one that names no launch
 * function launches nothing: neither is parsed (parsing every script under hack/ and
 * e2e/ would cost the check several times as much), and none of the first's launches
 * is listed.
 */
export function scriptLaunches(code: string, file = 'script.ts'): LaunchCall[] {
  const inProcess = RUNS_SERVER_IN_PROCESS.test(withoutCommentLines(code));
  if (!SERVER_ENTRY.test(code) && !SERVER_COMMAND.test(code) && !(inProcess && SELF.test(code))) return [];
  if (!LAUNCH_NAMED.test(code)) return [];
  const parsed = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true, scriptKind(file));
  const calls: LaunchCall[] = [];
  const judge = (call: ts.CallExpression | ts.NewExpression, execArgv: boolean, worker: boolean): void => {
    const args = call.arguments ?? [];
    const reader = new ArgumentReader(code, parsed, execArgv, call.getStart(parsed));
    const read = args.map((a) => reader.read(a)).join(', ');
    const text = call.getText(parsed);
    const entryAt = Math.min(firstAt(SERVER_ENTRY, read), firstAt(SERVER_COMMAND, read));
    const flagsRead = flagArguments(args, execArgv)
      .map((a) => reader.read(a))
      .join(', ');
    const flagsAt = firstAt(CARRIES_FLAGS, flagsRead);
    calls.push({
      line: parsed.getLineAndCharacterOfPosition(call.getStart(parsed)).line + 1,
      text,
      startsServer: entryAt < Infinity || (inProcess && SELF.test(text)),
      // In execArgv anywhere; on a command line, before the script (after it they are
      // the script's arguments). serverCommand() is both the entry and the flags.
      carriesFlags: execArgv ? flagsAt < Infinity : flagsAt <= entryAt && flagsAt < Infinity,
      worker,
    });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const fn = launchFunction(node.expression);
      if (fn) judge(node, fn === 'fork', false);
    } else if (isWorker(node)) {
      judge(node, true, true);
    }
    node.forEachChild(visit);
  };
  visit(parsed);
  return calls;
}

/** A shell word that runs node (`node`, `/usr/bin/node`; not `$NODE_BIN`, whose value the check cannot see). */
const NODE_WORD = /^(?:[\w./-]*\/)?node$/;

/**
 * Whether a command line runs node with every flag between `node` and its script (the
 * words right after a node word that start with `-`).
 */
function nodeWithFlags(words: readonly string[], flags: readonly string[]): boolean {
  return words.some((w, i) => {
    if (!NODE_WORD.test(w)) return false;
    const options: string[] = [];
    for (let j = i + 1; j < words.length && (words[j] as string).startsWith('-'); j++)
      options.push(words[j] as string);
    return flags.every((f) => options.includes(f));
  });
}

/**
 * The command lines of a shell script (backslash continuations joined) that run node or
 * name the server's entry: any line naming the entry starts the server unless it runs
 * `node` followed by the flags (npx tsx, the script run as an executable, a node held in
 * a variable all lack them).
 */
export function shellLaunches(source: string, flags: readonly string[]): LaunchCall[] {
  const calls: LaunchCall[] = [];
  const lines = source.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const first = i;
    let command = lines[i] as string;
    while (command.endsWith('\\') && i + 1 < lines.length) command = `${command.slice(0, -1)} ${lines[++i]}`;
    const code = command.replace(/(^|\s)#.*$/, '$1');
    const startsServer = SERVER_ENTRY.test(code);
    if (!startsServer && !/(?:^|[\s;&|(`"'/])node(?:\s|$)|\$\{?NODE\b/.test(code)) continue;
    const words = code.split(/[\s;&|()`"']+/).filter((w) => w !== '');
    calls.push({
      line: first + 1,
      text: command.trim(),
      startsServer,
      carriesFlags: nodeWithFlags(words, flags),
      worker: false,
    });
  }
  return calls;
}

/** The launches of a file by its name: .ts, .mts, .js, .mjs, .cjs as scripts, .sh as shell. */
export function launchesOf(file: string, source: string, flags: readonly string[]): LaunchCall[] {
  if (file.endsWith('.sh')) return shellLaunches(source, flags);
  return scriptLaunches(source, file);
}

/** The server launches of a file that lack the flags (or run the server in a worker thread). */
export function launchesWithoutFlags(file: string, source: string, flags: readonly string[]): LaunchCall[] {
  return launchesOf(file, source, flags).filter((c) => c.startsServer && (c.worker || !c.carriesFlags));
}

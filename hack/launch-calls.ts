// The calls in a script that start a process or a worker, each judged on its own:
// does it start the server (its entry point, the bench's server host, or the script
// itself when that script runs the server in process), and does it give that process
// the server's node flags (pkg/server/node-flags.ts)? hack/launchers.test.ts runs it
// over hack/ and e2e/. Judging a whole file (it starts the server somewhere and names
// the flags somewhere) let a second launch without them pass beside a first with them.
//
// A call's own text is read with what its identifiers were declared as in the same
// file (`const main = join(..., 'cmd', 'apiserver', 'main.js')`, a few levels deep),
// so `spawn(process.execPath, [main])` is known to start the server. It is a reading
// of the source, not an evaluation: a path built somewhere else (a parameter, another
// module) is not seen, which is why the helpers that build launches (children.ts,
// the harness) are checked on their own in launchers.test.ts.

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

/**
 * The functions that start a process (node:child_process, also promisified as
 * `execFileAsync` and the like), and worker threads. A method call on another object
 * (`re.exec(`) is not one; `child_process.spawn(` is.
 */
const LAUNCH = /(?:(?<![\w$.])|(?<=\bchild_process\.))(?:spawn|fork|exec|execFile)(?:Sync|Async)?\s*\(|\bnew\s+Worker\s*\(/g;

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
const RUNS_SERVER_IN_PROCESS = /\bserver\.startServer\(|\bimport\s*\{[^}]*\bstartServer\b[^}]*\}\s*from\s*['"][./]*pkg\/server\//;

/**
 * What puts the flags on a child's command line: the flags themselves, or the helpers
 * that add them (children.ts's execArgvOf, the harness's serverCommand, which
 * launchers.test.ts checks).
 */
const CARRIES_FLAGS = /\bSERVER_NODE_FLAGS\b|\bexecArgvOf\(|\bserverCommand\(/;

/** The helper that returns the server's command line (e2e/harness.ts): a launch of the server. */
const SERVER_COMMAND = /\bserverCommand\(/;

/** Identifiers a call's text names (spread ones too, not properties), to look up where they are declared. */
const IDENTIFIER = /(?<![\w$'"`])(?<!(?<!\.)\.)[A-Za-z_$][\w$]*/g;

/** Where an identifier is declared with a value (`const x = ...`, `let x: T = ...`). */
function declarationOf(source: string, name: string): string | undefined {
  const escaped = name.replace(/\$/g, '\\$');
  const decl = new RegExp(`\\b(?:const|let|var)\\s+${escaped}\\s*(?::[^=;]+)?=\\s*`, 'g');
  const found = decl.exec(source);
  if (!found) return undefined;
  return balancedUntil(source, found.index + found[0].length, ';');
}

/**
 * The text from `start` up to the `end` character (excluded) at bracket depth 0, or up
 * to the bracket that closes the one `start` is in; strings, template literals and
 * comments are skipped over whole, so a ')' in a string closes nothing.
 */
function balancedUntil(source: string, start: number, end: string): string {
  let depth = 0;
  for (let i = start; i < source.length; i++) {
    const c = source[i] as string;
    if (c === '"' || c === "'" || c === '`') {
      i = stringEnd(source, i);
      continue;
    }
    if (c === '/' && source[i + 1] === '/') {
      const eol = source.indexOf('\n', i);
      i = eol < 0 ? source.length : eol;
      continue;
    }
    if (c === '/' && source[i + 1] === '*') {
      const close = source.indexOf('*/', i + 2);
      i = close < 0 ? source.length : close + 1;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return source.slice(start, i);
      depth--;
    } else if (depth === 0 && c === end) return source.slice(start, i);
  }
  return source.slice(start);
}

/** The index of the quote that closes the string opened at `open`. */
function stringEnd(source: string, open: number): number {
  const quote = source[open];
  for (let i = open + 1; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === quote) return i;
  }
  return source.length;
}

/** A call's text with the declarations of the identifiers it names, `depth` levels deep. */
function withDeclarations(source: string, text: string, depth = 3): string {
  let expanded = text;
  let frontier = text;
  const seen = new Set<string>();
  for (let level = 0; level < depth && frontier; level++) {
    const next: string[] = [];
    for (const [name] of frontier.matchAll(IDENTIFIER)) {
      if (seen.has(name)) continue;
      seen.add(name);
      const value = declarationOf(source, name);
      if (value !== undefined) next.push(value);
    }
    frontier = next.join('\n');
    expanded += `\n${frontier}`;
  }
  return expanded;
}

/**
 * The source with its comment lines blanked (a line starting `//`, `/*` or `*`), their
 * line breaks kept: a comment that shows a launch is not one. Comments after code on
 * a line are left; a launch is rarely written there.
 */
function withoutCommentLines(source: string): string {
  return source.replace(/^[ \t]*(?:\/\/|\/\*|\*).*$/gm, '');
}

/** The launches in a JavaScript or TypeScript source. */
export function scriptLaunches(code: string): LaunchCall[] {
  const source = withoutCommentLines(code);
  const inProcess = RUNS_SERVER_IN_PROCESS.test(source);
  const calls: LaunchCall[] = [];
  for (const found of source.matchAll(LAUNCH)) {
    const open = (found.index ?? 0) + found[0].length;
    const text = `${found[0]}${balancedUntil(source, open, '\u0000')})`;
    const read = withDeclarations(source, text);
    calls.push({
      line: source.slice(0, found.index).split('\n').length,
      text,
      startsServer: SERVER_ENTRY.test(read) || SERVER_COMMAND.test(read) || (inProcess && SELF.test(text)),
      carriesFlags: CARRIES_FLAGS.test(read),
      worker: found[0].startsWith('new'),
    });
  }
  return calls;
}

/** The command lines of a shell script that run node (backslash continuations joined). */
export function shellLaunches(source: string, flags: readonly string[]): LaunchCall[] {
  const calls: LaunchCall[] = [];
  const lines = source.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const first = i;
    let command = lines[i] as string;
    while (command.endsWith('\\') && i + 1 < lines.length) command = `${command.slice(0, -1)} ${lines[++i]}`;
    const code = command.replace(/(^|\s)#.*$/, '$1');
    if (!/(?:^|[\s;&|(`"'/])node(?:\s|$)|\$\{?NODE\b/.test(code)) continue;
    const words = code.split(/\s+/);
    calls.push({
      line: first + 1,
      text: command.trim(),
      startsServer: SERVER_ENTRY.test(code),
      carriesFlags: flags.every((f) => words.includes(f)),
      worker: false,
    });
  }
  return calls;
}

/** The launches of a file by its name: .ts, .mts, .js, .mjs, .cjs as scripts, .sh as shell. */
export function launchesOf(file: string, source: string, flags: readonly string[]): LaunchCall[] {
  if (file.endsWith('.sh')) return shellLaunches(source, flags);
  return scriptLaunches(source);
}

/** The server launches of a file that lack the flags (or run the server in a worker thread). */
export function launchesWithoutFlags(file: string, source: string, flags: readonly string[]): LaunchCall[] {
  return launchesOf(file, source, flags).filter((c) => c.startsServer && (c.worker || !c.carriesFlags));
}

// Command-line flags, named as kube-apiserver names them so operators need not
// learn new ones, parsed by commander from the option groups' flag definitions
// (server-run-options.ts). Parsing only turns argv into option values and notes
// what it cannot read (unknown flags included); defaults come from the same
// definitions, and every other check is the groups' validate(), so a user sees all
// problems at once instead of one per try.

import { Command, CommanderError, Option } from 'commander';
import { formatDuration, parseDuration } from '../../util/duration.js';
import type { FlagKind, FlagSpec } from './option-group.js';
import { FLAGS, OPTION_GROUPS, type ServerOptionValues } from './server-run-options.js';

export { FLAGS };

export interface ParsedFlags {
  readonly help: boolean;
  /** Only the flags that were given. */
  readonly values: Partial<ServerOptionValues>;
  /**
   * Everything wrong with the command line: unknown flags, stray arguments, missing
   * values, values that could not be converted. Reported by validate() with the rest,
   * so a user sees every problem at once.
   */
  readonly problems: readonly string[];
}

type AnyFlag = FlagSpec<ServerOptionValues>;

/** The value placeholder --help shows, named as pflag names its types. */
const PLACEHOLDER: Readonly<Record<FlagKind, string>> = {
  string: '<string>',
  port: '<int>',
  list: '<strings>',
  duration: '<duration>',
  int: '<int>',
  // Optional: `--watch-cache` alone means true, `--watch-cache=false` says otherwise.
  bool: '[bool]',
};

const BOOLEAN_TRUE = /^(true|t|1)$/i;
const BOOLEAN_FALSE = /^(false|f|0)$/i;

/** How --help and the README show a flag's default ('' for none). */
export function defaultText(f: AnyFlag): string {
  if (f.defaultText !== undefined) return f.defaultText;
  const value: unknown = f.default;
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.join(',');
  if (f.kind === 'duration' && typeof value === 'number') return formatDuration(value);
  return String(value);
}

/** A flag's usage with its default, as --help prints it. */
function description(f: AnyFlag): string {
  const text = defaultText(f);
  return text === '' ? f.usage : `${f.usage} (default ${text})`;
}

/** The server's command: one commander option per flag, under its group's heading. */
function serverCommand(program: string): Command {
  const command = new Command(program)
    .description('Serves the platform management API over HTTPS. Flags take --flag=value or --flag value.')
    .helpOption(false)
    // Problems are collected, never printed by commander nor turned into an exit.
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined, outputError: () => undefined })
    // One flag a line however long its usage, as the tests and the README read them.
    .configureHelp({ helpWidth: Number.MAX_SAFE_INTEGER });
  for (const group of OPTION_GROUPS) {
    for (const f of group.flags) {
      command.addOption(
        new Option(`--${f.name} ${PLACEHOLDER[f.kind]}`, description(f)).helpGroup(`${group.title}:`),
      );
    }
  }
  return command.addOption(new Option('-h, --help', 'Show this help and exit.').helpGroup('Other flags:'));
}

/**
 * Parses `--flag=value` and `--flag value`, as kube-apiserver's flags (spf13/pflag)
 * read them: a boolean flag given bare (`--watch-cache`) means true, the last of a
 * repeated flag wins. Never throws: every problem is collected, those of the
 * command line's shape (unknown flags, stray arguments) first, then the values that
 * could not be converted.
 */
export function parseFlags(argv: readonly string[]): ParsedFlags {
  const args = withDoubleDashes(argv);
  try {
    return parseWith(args, []);
  } catch (err) {
    if (!(err instanceof CommanderError) || err.code !== 'commander.optionMissingArgument') throw err;
    // Commander stops there, and only a value-taking flag that ends argv lacks its
    // value: read the rest without it, then say so.
    return parseWith(args.slice(0, -1), [`flag needs an argument: ${args[args.length - 1] ?? ''}`]);
  }
}

function parseWith(args: readonly string[], trailing: readonly string[]): ParsedFlags {
  const values: Partial<ServerOptionValues> = {};
  const conversions: string[] = [];
  let help = false;
  const command = serverCommand('platform-apiserver');
  for (const f of FLAGS) {
    command.on(`option:${f.name}`, (raw: string | null) => {
      // null: an optional value (a boolean's) not given.
      const problem = setFlag(values, f, raw ?? 'true');
      if (problem) conversions.push(problem);
    });
  }
  command.on('option:help', () => (help = true));
  // Commander reads every known flag, and leaves what it does not know to us.
  const { operands, unknown } = command.parseOptions([...args]);
  const problems = operands.map(unexpectedArgument);
  let at = -1;
  for (let i = 0; i < unknown.length; i++) {
    const arg = unknown[i] ?? '';
    at = args.indexOf(arg, at + 1);
    if (!arg.startsWith('-') || arg === '-' || arg === '--') {
      problems.push(unexpectedArgument(arg));
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    problems.push(flag.replace(/^--?/, '') === 'help' ? '--help takes no value' : `unknown flag: ${flag}`);
    // `--unknown value`: the value right after it belongs to it, not a stray argument.
    const next = unknown[i + 1];
    if (eq < 0 && next !== undefined && !next.startsWith('-') && args[at + 1] === next) {
      at++;
      i++;
    }
  }
  return { help, values, problems: [...problems, ...conversions, ...trailing] };
}

function unexpectedArgument(arg: string): string {
  return `unexpected argument "${arg}": every setting is a --flag`;
}

/** `-secure-port=1` as `--secure-port=1`: today's single-dash long flags keep working. */
function withDoubleDashes(argv: readonly string[]): string[] {
  const known = new Set(FLAGS.map((f) => f.name));
  return argv.map((arg) =>
    /^-[^-]/.test(arg) && known.has(arg.slice(1).split('=')[0] ?? '') ? `-${arg}` : arg,
  );
}

/** Converts and stores one flag's value; returns the problem when it cannot. */
function setFlag(values: Partial<ServerOptionValues>, f: AnyFlag, raw: string): string | undefined {
  const out = values as Record<string, unknown>;
  switch (f.kind) {
    case 'string':
      out[f.field] = raw;
      return undefined;
    case 'list':
      out[f.field] = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      return undefined;
    case 'duration': {
      const ms = parseDuration(raw);
      if (ms === undefined)
        return `--${f.name}: "${raw}" is not a duration (a number with a unit, such as 60s or 5m)`;
      out[f.field] = ms;
      return undefined;
    }
    case 'bool':
      if (BOOLEAN_TRUE.test(raw.trim())) out[f.field] = true;
      else if (BOOLEAN_FALSE.test(raw.trim())) out[f.field] = false;
      else return `--${f.name}: "${raw}" is not a boolean (true or false)`;
      return undefined;
    case 'port':
      if (!/^\d+$/.test(raw.trim()))
        return `--${f.name}: "${raw}" is not a port number (an integer from 0 to 65535)`;
      out[f.field] = Number(raw.trim());
      return undefined;
    case 'int':
      if (!/^-?\d+$/.test(raw.trim())) return `--${f.name}: "${raw}" is not an integer`;
      out[f.field] = Number(raw.trim());
      return undefined;
  }
}

/** The --help text, commander's, with the flags under their groups' headings. */
export function usage(program = 'platform-apiserver'): string {
  return serverCommand(program).helpInformation();
}

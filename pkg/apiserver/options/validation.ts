// Checks the option groups share. Each group checks its own values (see
// option-group.ts) and returns every problem it finds, so a user fixing a
// deployment sees all of them at once instead of one per restart. Pure apart from
// looking at the files the flags name.

import { accessSync, constants, statSync } from 'node:fs';

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_LABEL}(\\.${DNS1123_LABEL})*$`);
export const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL}$`);

export function isDNS1123Subdomain(value: string): boolean {
  return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** What keeps `file` from being read as a file, or undefined when it can be. */
export function fileProblem(file: string): string | undefined {
  try {
    accessSync(file, constants.R_OK);
  } catch {
    return `cannot read "${file}"`;
  }
  if (!statSync(file).isFile()) return `"${file}" is not a file`;
  return undefined;
}

/** `--flag: problem` for each named file that cannot be read ('' names none). */
export function fileProblems(files: readonly (readonly [flag: string, file: string])[]): string[] {
  const problems: string[] = [];
  for (const [flag, file] of files) {
    const problem = file === '' ? undefined : fileProblem(file);
    if (problem) problems.push(`${flag}: ${problem}`);
  }
  return problems;
}

export function statOrUndefined(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

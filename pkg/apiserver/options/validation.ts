// Checks the option groups share. Each group checks its own values (see
// option-group.ts) and returns every problem it finds, so a user fixing a
// deployment sees all of them at once instead of one per restart. Pure apart from
// looking at the files the flags name.

import { accessSync, constants, statSync } from 'node:fs';
import { isDNS1123Subdomain as dns1123SubdomainProblems } from '../../apis/meta/validation.js';

/** A flag's value is a DNS-1123 subdomain (apimachinery's IsDNS1123Subdomain finds no problem). */
export function isSubdomain(value: string): boolean {
  return dns1123SubdomainProblems(value).length === 0;
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

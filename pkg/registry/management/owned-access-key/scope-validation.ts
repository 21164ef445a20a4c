// The rules of an access-key scope the schema cannot say: in the deprecated
// `rules`, resourceNames need resources, wildcard resource patterns may not
// overlap other entries, and `*` in a non-resource URL may only be the whole last
// step. A scope that breaks them would match something other than what its author
// meant, so it is refused (422) rather than guessed at.

import { forbidden, invalid, type FieldError, type FieldPath } from '../../../apis/meta/field-errors.js';
import { isObject } from '../../../apis/meta/types.js';
import { validateNonEmptyEntries } from '../common.js';

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Does the wildcard pattern `pattern` cover the resource entry `entry`? */
function covers(pattern: string, entry: string): boolean {
  if (pattern === '*') return true;
  const [resource = '', sub] = entry.split('/', 2);
  if (pattern.endsWith('/*')) return sub !== undefined && resource === pattern.slice(0, -2);
  if (pattern.startsWith('*/')) return sub !== undefined && sub === pattern.slice(2);
  return false;
}

function isWildcard(entry: string): boolean {
  return entry === '*' || entry.endsWith('/*') || entry.startsWith('*/');
}

function validateResourcePatterns(list: string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  list.forEach((entry, i) => {
    if (!isWildcard(entry)) return;
    const overlapped = list.find((other, j) => j !== i && covers(entry, other));
    if (overlapped !== undefined) {
      errs.push(
        invalid(
          path.index(i),
          entry,
          `overlaps the entry "${overlapped}"; wildcard entries must not overlap others`,
        ),
      );
    }
  });
  return errs;
}

function validateNonResourceURL(url: string): string | undefined {
  const star = url.indexOf('*');
  if (star < 0) return undefined;
  if (url === '*') return undefined;
  if (star === url.length - 1 && url.endsWith('/*')) return undefined;
  return '"*" is only allowed as the whole last step of the path, e.g. /apis/*';
}

function validateRule(rule: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validateNonEmptyEntries(rule['verbs'], path.child('verbs')));
  const resources = Array.isArray(rule['resources']) ? rule['resources'] : [];
  resources.forEach((gr, i) => {
    if (!isObject(gr)) return;
    const grPath = path.child('resources').index(i);
    const patterns = strings(gr['resources']);
    errs.push(...validateNonEmptyEntries(gr['resources'], grPath.child('resources')));
    errs.push(...validateResourcePatterns(patterns, grPath.child('resources')));
    if (strings(gr['resourceNames']).length > 0 && patterns.length === 0) {
      errs.push(forbidden(grPath.child('resourceNames'), 'may only be set together with resources'));
    }
  });
  strings(rule['nonResourceURLs']).forEach((url, i) => {
    const problem = validateNonResourceURL(url);
    if (problem) errs.push(invalid(path.child('nonResourceURLs').index(i), url, problem));
  });
  return errs;
}

export function validateScope(scope: unknown, path: FieldPath): FieldError[] {
  if (!isObject(scope) || !Array.isArray(scope['rules'])) return [];
  const errs: FieldError[] = [];
  scope['rules'].forEach((rule, i) => {
    if (isObject(rule)) errs.push(...validateRule(rule, path.child('rules').index(i)));
  });
  return errs;
}

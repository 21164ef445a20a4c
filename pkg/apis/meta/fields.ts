// Field selectors (k8s.io/apimachinery/pkg/fields): `a=b`, `a==b`, `a!=b`, comma
// separated, with `\`, `,` and `=` escaped by a backslash in values. Every kind
// here supports only the generic fields metadata.name and metadata.namespace.

import type { ParseResult } from './labels.js';
import type { KubeObject } from './types.js';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  readonly empty: boolean;
  matches(fields: Readonly<Record<string, string>>): boolean;
  /** The value `field` must equal for anything to match, if the selector pins it. */
  requiresExactMatch(field: string): string | undefined;
  toString(): string;
}

/** The fields every object can be selected by (ObjectMetaFieldsSet). */
export const SUPPORTED_FIELDS = ['metadata.name', 'metadata.namespace'] as const;

/** The field set an object is matched against. */
export function objectMetaFieldsSet(obj: KubeObject): Record<string, string> {
  return { 'metadata.name': obj.metadata.name ?? '', 'metadata.namespace': obj.metadata.namespace ?? '' };
}

function splitTerms(selector: string): string[] {
  if (selector === '') return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector.charAt(i);
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** `!=` and `==` are tried before `=` so that `a==b` does not leave `=b` as the value. */
const TERM_OPERATORS = ['!=', '==', '='] as const;

function splitTerm(term: string): { lhs: string; op: string; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    const rest = term.slice(i);
    for (const op of TERM_OPERATORS) {
      if (rest.startsWith(op)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

function unescapeValue(s: string): ParseResult<string> {
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        return { ok: false, error: `invalid field selector: invalid escape sequence: \\${c}` };
      }
      out += c;
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') {
      return {
        ok: false,
        error: `invalid field selector: unescaped character in value: ${c.codePointAt(0) ?? 0}`,
      };
    } else out += c;
  }
  if (inSlash) return { ok: false, error: 'invalid field selector: invalid escape sequence: \\' };
  return { ok: true, value: out };
}

function escapeValue(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/,/g, '\\,').replace(/=/g, '\\=');
}

export function fieldSelectorFromRequirements(requirements: readonly FieldRequirement[]): FieldSelector {
  const reqs = [...requirements];
  return {
    requirements: reqs,
    empty: reqs.length === 0,
    matches: (fields) =>
      reqs.every((r) => {
        const v = fields[r.field] ?? '';
        return r.operator === '=' ? v === r.value : v !== r.value;
      }),
    requiresExactMatch(field) {
      for (const r of reqs) if (r.field === field && r.operator === '=') return r.value;
      return undefined;
    },
    toString: () => reqs.map((r) => `${r.field}${r.operator}${escapeValue(r.value)}`).join(','),
  };
}

export const EVERYTHING_FIELDS: FieldSelector = fieldSelectorFromRequirements([]);

/**
 * Parses a field selector and checks that it names only supported fields;
 * the error text is what the API returns in a 400.
 */
export function parseFieldSelector(
  text: string,
  supported: readonly string[] = SUPPORTED_FIELDS,
): ParseResult<FieldSelector> {
  const parts = splitTerms(text).sort();
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const term = splitTerm(part);
    if (!term) return { ok: false, error: `invalid selector: '${text}'; can't understand '${part}'` };
    const value = unescapeValue(term.rhs);
    if (!value.ok) return value;
    reqs.push({ field: term.lhs, operator: term.op === '!=' ? '!=' : '=', value: value.value });
  }
  for (const r of reqs) {
    if (!supported.includes(r.field)) {
      return {
        ok: false,
        error: `${JSON.stringify(r.field)} is not a known field selector: only ${supported.map((f) => JSON.stringify(f)).join(', ')}`,
      };
    }
  }
  return { ok: true, value: fieldSelectorFromRequirements(reqs) };
}

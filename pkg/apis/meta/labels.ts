// Label selectors in apimachinery's string syntax (k8s.io/apimachinery/pkg/labels):
//   env=prod, tier!=web, app in (a,b), zone notin (x), team, !legacy, gen>3
// Parsing returns a result instead of throwing so callers decide the HTTP status.

import { isQualifiedName, isValidLabelValue } from './validation.js';

export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  /** No requirements: selects everything. */
  readonly empty: boolean;
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** The value a requirement pins `key` to (`key=v`, `key==v`, `key in (v)`), if any. */
  requiresExactMatch(key: string): string | undefined;
  toString(): string;
}

export type ParseResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

type Token =
  | 'error'
  | 'end'
  | 'closedPar'
  | 'comma'
  | 'doesNotExist'
  | 'doubleEquals'
  | 'equals'
  | 'greaterThan'
  | 'identifier'
  | 'in'
  | 'lessThan'
  | 'notEquals'
  | 'notIn'
  | 'openPar';

const SYMBOLS: Record<string, Token> = {
  ')': 'closedPar',
  ',': 'comma',
  '!': 'doesNotExist',
  '==': 'doubleEquals',
  '=': 'equals',
  '>': 'greaterThan',
  in: 'in',
  '<': 'lessThan',
  '!=': 'notEquals',
  notin: 'notIn',
  '(': 'openPar',
};

const BINARY_OPERATORS = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];

interface Item {
  readonly tok: Token;
  readonly lit: string;
}

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
}

function isSpecial(ch: string): boolean {
  return '=!(),><'.includes(ch);
}

function lex(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s.charAt(pos))) pos++;
    if (pos >= s.length) {
      items.push({ tok: 'end', lit: '' });
      return items;
    }
    const start = pos;
    if (isSpecial(s.charAt(pos))) {
      // The longest run of symbols that still names an operator.
      let best: Item | undefined;
      let buffer = '';
      while (pos < s.length && isSpecial(s.charAt(pos))) {
        buffer += s.charAt(pos);
        const tok = SYMBOLS[buffer];
        if (tok) {
          best = { tok, lit: buffer };
          pos++;
        } else if (best) {
          break;
        } else {
          pos++;
        }
      }
      items.push(best ?? { tok: 'error', lit: `error expected: keyword found '${s.slice(start, pos)}'` });
      if (!best) return [...items, { tok: 'end', lit: '' }];
      continue;
    }
    while (pos < s.length && !isSpecial(s.charAt(pos)) && !isWhitespace(s.charAt(pos))) pos++;
    const word = s.slice(start, pos);
    const tok = word === 'in' || word === 'notin' ? SYMBOLS[word] : undefined;
    items.push({ tok: tok ?? 'identifier', lit: word });
  }
}

class ParseError extends Error {}

class Parser {
  private position = 0;
  constructor(private readonly items: Item[]) {}

  /** In value position the keywords `in`/`notin` are plain identifiers. */
  private peek(values: boolean): Item {
    const item = this.items[Math.min(this.position, this.items.length - 1)] ?? { tok: 'end', lit: '' };
    return values && (item.tok === 'in' || item.tok === 'notIn')
      ? { tok: 'identifier', lit: item.lit }
      : item;
  }

  private next(values: boolean): Item {
    const item = this.peek(values);
    this.position++;
    return item;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.peek(true);
      if (tok === 'end') return reqs;
      if (tok !== 'identifier' && tok !== 'doesNotExist') {
        throw new ParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
      try {
        reqs.push(this.requirement());
      } catch (err) {
        if (err instanceof ParseError) throw new ParseError(`unable to parse requirement: ${err.message}`);
        throw err;
      }
      const after = this.next(true);
      if (after.tok === 'end') return reqs;
      if (after.tok !== 'comma')
        throw new ParseError(`found '${after.lit}', expected: ',' or 'end of string'`);
      const following = this.peek(true);
      if (following.tok !== 'identifier' && following.tok !== 'doesNotExist') {
        throw new ParseError(`found '${following.lit}', expected: identifier after ','`);
      }
    }
  }

  private requirement(): LabelRequirement {
    let negated = false;
    let item = this.next(true);
    if (item.tok === 'doesNotExist') {
      negated = true;
      item = this.next(true);
    }
    if (item.tok !== 'identifier') throw new ParseError(`found '${item.lit}', expected: identifier`);
    const key = item.lit;
    checkKey(key);
    // `!key` takes no operator: whatever follows it is the caller's to reject.
    if (negated) return requirement(key, '!', []);
    const la = this.peek(true).tok;
    if (la === 'end' || la === 'comma') return requirement(key, 'exists', []);
    const opItem = this.next(false);
    let op: LabelOperator;
    switch (opItem.tok) {
      case 'in':
        op = 'in';
        break;
      case 'notIn':
        op = 'notin';
        break;
      case 'equals':
        op = '=';
        break;
      case 'doubleEquals':
        op = '==';
        break;
      case 'notEquals':
        op = '!=';
        break;
      case 'greaterThan':
        op = 'gt';
        break;
      case 'lessThan':
        op = 'lt';
        break;
      default:
        throw new ParseError(`found '${opItem.lit}', expected: ${BINARY_OPERATORS.join(', ')}`);
    }
    const values = op === 'in' || op === 'notin' ? this.setValues() : this.exactValue();
    return requirement(key, op, [...new Set(values)].sort());
  }

  private setValues(): string[] {
    const open = this.next(true);
    if (open.tok !== 'openPar') throw new ParseError(`found '${open.lit}' expected: '('`);
    const la = this.peek(true);
    if (la.tok === 'closedPar') {
      this.next(true);
      return [''];
    }
    if (la.tok !== 'identifier' && la.tok !== 'comma') {
      throw new ParseError(`found '${la.lit}', expected: ',', ')' or identifier`);
    }
    const values: string[] = [];
    for (;;) {
      const item = this.next(true);
      if (item.tok === 'identifier') {
        values.push(item.lit);
        const after = this.peek(true);
        if (after.tok === 'comma') continue;
        if (after.tok === 'closedPar') break;
        throw new ParseError(`found '${after.lit}', expected: ',' or ')'`);
      } else if (item.tok === 'comma') {
        // Empty members: "(,a", "a,,b", "a,)" all include the empty value.
        if (values.length === 0) values.push('');
        const after = this.peek(true);
        if (after.tok === 'closedPar') {
          values.push('');
          break;
        }
        if (after.tok === 'comma') values.push('');
      } else {
        throw new ParseError(`found '${item.lit}', expected: ',', or identifier`);
      }
    }
    const close = this.next(true);
    if (close.tok !== 'closedPar') throw new ParseError(`found '${close.lit}', expected: ')'`);
    return values;
  }

  private exactValue(): string[] {
    const la = this.peek(true);
    if (la.tok === 'end' || la.tok === 'comma') return [''];
    const item = this.next(true);
    if (item.tok === 'identifier') return [item.lit];
    throw new ParseError(`found '${item.lit}', expected: identifier`);
  }
}

function checkKey(key: string): void {
  const errs = isQualifiedName(key);
  if (errs.length > 0) throw new ParseError(`key: Invalid value: ${JSON.stringify(key)}: ${errs.join('; ')}`);
}

function requirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  if ((operator === 'gt' || operator === 'lt') && !/^[+-]?\d+$/.test(values[0] ?? '')) {
    throw new ParseError(
      `values[0]: Invalid value: ${JSON.stringify(values[0] ?? '')}: for 'Gt', 'Lt' operators, the value must be an integer`,
    );
  }
  values.forEach((v, i) => {
    const errs = isValidLabelValue(v);
    if (errs.length > 0) {
      throw new ParseError(`values[${i}][${key}]: Invalid value: ${JSON.stringify(v)}: ${errs.join('; ')}`);
    }
  });
  return { key, operator, values };
}

export function requirementMatches(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && r.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !r.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (value === undefined || !/^[+-]?\d+$/.test(value)) return false;
      const lhs = Number(value);
      const rhs = Number(r.values[0]);
      return r.operator === 'gt' ? lhs > rhs : lhs < rhs;
    }
  }
}

function requirementString(r: LabelRequirement): string {
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${r.values.join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0] ?? ''}`;
    case 'lt':
      return `${r.key}<${r.values[0] ?? ''}`;
    default:
      return `${r.key}${r.operator}${r.values[0] ?? ''}`;
  }
}

export function labelSelectorFromRequirements(requirements: readonly LabelRequirement[]): LabelSelector {
  const reqs = [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    requirements: reqs,
    empty: reqs.length === 0,
    matches: (labels) => reqs.every((r) => requirementMatches(r, labels ?? {})),
    requiresExactMatch(key) {
      for (const r of reqs) {
        if (r.key !== key) continue;
        if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1)
          return r.values[0];
      }
      return undefined;
    },
    toString: () => reqs.map(requirementString).join(','),
  };
}

export const EVERYTHING_LABELS: LabelSelector = labelSelectorFromRequirements([]);

/** Parses a label selector; the error text is what the API returns in a 400. */
export function parseLabelSelector(text: string): ParseResult<LabelSelector> {
  try {
    const reqs = new Parser(lex(text)).parse();
    return { ok: true, value: labelSelectorFromRequirements(reqs) };
  } catch (err) {
    if (err instanceof ParseError) return { ok: false, error: err.message };
    throw err;
  }
}

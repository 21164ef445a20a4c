// Warning headers (RFC 7234 §5.5 as Kubernetes uses them: code 299, agent "-"), one per
// distinct warning, quoted the way apimachinery's NewWarningHeader quotes them.

/** Upstream stops adding warnings past this many bytes of header text. */
const MAX_TOTAL_WARNING_BYTES = 4096;

/** `299 - "text"` with `"` and `\` escaped. */
export function warningHeaderValue(text: string): string {
  // Header values cannot carry control characters; a warning is one line of text.
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, ' ');
  const quoted = `"${clean.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  // Node writes header strings as latin1; re-encode so UTF-8 text arrives as UTF-8 bytes.
  return `299 - ${Buffer.from(quoted, 'utf8').toString('latin1')}`;
}

/** Header values for the warnings, deduplicated, within the upstream size budget. */
export function warningHeaders(warnings: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  let total = 0;
  for (const w of warnings) {
    if (w === '' || seen.has(w)) continue;
    seen.add(w);
    const value = warningHeaderValue(w);
    if (total + value.length > MAX_TOTAL_WARNING_BYTES) break;
    total += value.length;
    out.push(value);
  }
  return out;
}

// Warning headers (RFC 7234 §5.5 as Kubernetes uses them: code 299, agent "-"), one per
// distinct warning, quoted the way apimachinery's NewWarningHeader quotes them.

/** Upstream stops adding warnings past this many bytes of header text. */
const MAX_TOTAL_WARNING_BYTES = 4096;

/** `299 - "text"` with `"` and `\` escaped. */
export function warningHeaderValue(text: string): string {
  // Header values cannot carry control characters; a warning is one line of text.
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, ' ');
  // Node sends header text as UTF-8 but refuses characters past U+00FF outright.
  // eslint-disable-next-line no-control-regex
  const sendable = clean.replace(/[^\u0000-\u00ff]/gu, '?');
  return `299 - "${sendable.replace(/["\\]/g, (c) => `\\${c}`)}"`;
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

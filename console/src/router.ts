// Hash routes (`#/secrets/<ns>/<name>`): the server serves one page, so a reload
// or a bookmark never asks it for a path it does not have.

export interface Route {
  /** Segments, `:x` for a parameter: ['secrets', ':ns', ':name']. */
  readonly pattern: string[];
  readonly name: string;
}

export interface Match {
  readonly route: Route;
  readonly params: string[];
}

export function currentSegments(hash: string): string[] {
  return hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}

export function match(routes: readonly Route[], segments: string[]): Match | undefined {
  for (const route of routes) {
    if (route.pattern.length !== segments.length) continue;
    const params: string[] = [];
    let ok = true;
    route.pattern.forEach((p, i) => {
      const s = segments[i] ?? '';
      if (p.startsWith(':')) params.push(s);
      else if (p !== s) ok = false;
    });
    if (ok) return { route, params };
  }
  return undefined;
}

/** `href` for a route, each segment escaped. */
export function link(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

// What a request is about, derived from its method, path and query exactly as
// k8s.io/apiserver endpoints/request/requestinfo.go derives it: this is both our
// router and the input of authorization, so its verbs must be Kubernetes' verbs
// (a GET on a collection is `list`, or `watch` with ?watch; a DELETE on one is
// `deletecollection`; the deprecated /watch/ path segment is a watch).

export interface RequestInfo {
  /** True for /apis/<group>/<version>/<resource>... paths. */
  readonly isResourceRequest: boolean;
  /** The URL path with any configured prefix removed (what authorization sees). */
  readonly path: string;
  /** Kubernetes verb for resource requests; the lower-cased HTTP method otherwise. */
  readonly verb: string;
  readonly apiPrefix: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  /** resource/name/subresource/... as in the path (after any namespace). */
  readonly parts: readonly string[];
  /** The watch came from the deprecated `/watch/` path segment rather than ?watch. */
  readonly watchViaPath: boolean;
}

const API_PREFIXES: ReadonlySet<string> = new Set(['api', 'apis']);
const GROUPLESS_API_PREFIXES: ReadonlySet<string> = new Set(['api']);
/** Path segments after /namespaces/<ns> that belong to the namespace itself. */
const NAMESPACE_SUBRESOURCES: ReadonlySet<string> = new Set(['status', 'finalize']);

/** Normalises configured prefixes: leading slash, no trailing slash, longest first. */
export function normalizePrefixes(prefixes: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of prefixes) {
    const trimmed = p.replace(/\/+$/, '');
    if (trimmed === '') continue;
    out.add(trimmed.startsWith('/') ? trimmed : `/${trimmed}`);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** The path with the first matching prefix removed; the path itself when none matches. */
export function stripPrefix(path: string, prefixes: readonly string[]): string {
  for (const prefix of prefixes) {
    if (path.startsWith(prefix)) {
      if (path.length === prefix.length) return '/';
      if (path.charCodeAt(prefix.length) === 47 /* '/' */) return path.slice(prefix.length);
    }
  }
  return path;
}

/**
 * The path's segments between its leading and trailing slashes, decoded. One array and
 * the segments themselves: no trimmed copy, no second array from a map.
 */
function splitPath(path: string): string[] {
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 47 /* '/' */) start++;
  while (end > start && path.charCodeAt(end - 1) === 47) end--;
  const segments: string[] = [];
  if (start === end) return segments;
  for (;;) {
    const slash = path.indexOf('/', start);
    if (slash < 0 || slash >= end) {
      segments.push(decodeSegment(path.slice(start, end)));
      return segments;
    }
    segments.push(decodeSegment(path.slice(start, slash)));
    start = slash + 1;
  }
}

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    // An undecodable segment names nothing we serve; keep it so routing 404s.
    return segment;
  }
}

/** The boolean conversion of query parameters (apimachinery Convert_Slice_string_To_bool). */
export function queryBool(value: string | null | undefined): boolean | undefined {
  if (value === null || value === undefined) return undefined;
  return !(value === '0' || value.toLowerCase() === 'false');
}

function nonResource(path: string, method: string): RequestInfo {
  return {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
    watchViaPath: false,
  };
}

/** Where a request's query is read from only when needed (a request scope parses it on first use). */
export interface QuerySource {
  readonly query: URLSearchParams;
}

/**
 * Derives the request info. `query` is only consulted for GET/HEAD on collections
 * (watch and the metadata.name field selector), so callers may pass it lazily: a
 * function, or an object whose `query` is read then (the server passes the request's
 * scope: no closure per request).
 */
export function newRequestInfo(
  method: string,
  path: string,
  query: (() => URLSearchParams) | QuerySource,
): RequestInfo {
  // The segments are walked by index and `parts` sliced off once, at the end.
  const segments = splitPath(path);
  if (segments.length < 3) return nonResource(path, method);
  const apiPrefix = segments[0] ?? '';
  if (!API_PREFIXES.has(apiPrefix)) return nonResource(path, method);
  let at = 1;

  let apiGroup = '';
  if (!GROUPLESS_API_PREFIXES.has(apiPrefix)) {
    // /apis/<group>/<version> alone is discovery, not a resource.
    if (segments.length - at < 3) return nonResource(path, method);
    apiGroup = segments[at] ?? '';
    at++;
  }
  const apiVersion = segments[at] ?? '';
  at++;

  let verb: string;
  let watchViaPath = false;
  if (segments[at] === 'watch') {
    at++;
    verb = 'watch';
    watchViaPath = true;
  } else {
    switch (method) {
      case 'POST':
        verb = 'create';
        break;
      case 'GET':
      case 'HEAD':
        verb = 'get';
        break;
      case 'PUT':
        verb = 'update';
        break;
      case 'PATCH':
        verb = 'patch';
        break;
      case 'DELETE':
        verb = 'delete';
        break;
      default:
        verb = '';
    }
  }

  let namespace = '';
  if (segments[at] === 'namespaces') {
    if (segments.length - at > 1) {
      namespace = segments[at + 1] ?? '';
      if (segments.length - at > 2 && !NAMESPACE_SUBRESOURCES.has(segments[at + 2] ?? '')) at += 2;
    }
  }
  const parts = segments.slice(at);

  const resource = parts[0] ?? '';
  let name = parts[1] ?? '';
  const subresource = parts[2] ?? '';

  if (name === '' && verb === 'get') {
    const q = typeof query === 'function' ? query() : query.query;
    verb = queryBool(q.get('watch')) ? 'watch' : 'list';
    const selected = nameFromFieldSelector(q.get('fieldSelector'));
    if (selected !== undefined) name = selected;
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';

  return {
    isResourceRequest: true,
    path,
    verb,
    apiPrefix,
    apiGroup,
    apiVersion,
    namespace,
    resource,
    subresource,
    name,
    parts,
    watchViaPath,
  };
}

/**
 * The name a field selector pins down with `metadata.name=x` (or `==`), when it is a
 * valid path segment: authorization may then be decided for that one object.
 */
export function nameFromFieldSelector(selector: string | null): string | undefined {
  if (!selector) return undefined;
  for (const term of splitUnescaped(selector, ',')) {
    const m = /^(.*?)(==|!=|=)(.*)$/s.exec(term);
    if (!m) continue;
    const field = unescapeSelector((m[1] ?? '').trim());
    if (field !== 'metadata.name' || m[2] === '!=') continue;
    const value = unescapeSelector((m[3] ?? '').trim());
    return isValidPathSegmentName(value) ? value : undefined;
  }
  return undefined;
}

function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) {
      current += c + s[i + 1];
      i++;
    } else if (c === sep) {
      out.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  out.push(current);
  return out;
}

function unescapeSelector(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** apimachinery path.IsValidPathSegmentName: not `.`/`..`, no `/` or `%`. */
export function isValidPathSegmentName(name: string): boolean {
  if (name === '' || name === '.' || name === '..') return false;
  return !name.includes('/') && !name.includes('%');
}

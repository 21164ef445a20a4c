// Durations on the command line: Go's time.ParseDuration forms (see pkg/util/duration.ts,
// shared with the ?timeout= query parameter).

export { parseDuration } from '../../util/duration.js';

// The string and number formats the kind schemas use, checked the way
// kube-openapi's strfmt registry checks them. Added to ajv by hand: four small
// predicates do not justify a dependency.

/** Standard base64 (RFC 4648 section 4): its alphabet only, padded to a multiple of 4, no whitespace. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function isBase64(value: string): boolean {
  return BASE64.test(value);
}

/** RFC 3339 date-time, with optional fractional seconds and a Z or numeric offset. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

export function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 60) return false;
  // Day 0 of the next month is the last day of this one.
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) return false;
  const offsetHours = m[7] === undefined ? 0 : Number(m[7]);
  const offsetMinutes = m[8] === undefined ? 0 : Number(m[8]);
  return offsetHours <= 23 && offsetMinutes <= 59;
}

export function isInt32(value: number): boolean {
  return Number.isInteger(value) && value >= -(2 ** 31) && value <= 2 ** 31 - 1;
}

/** JSON numbers are doubles here; anything integral within the int64 range passes. */
export function isInt64(value: number): boolean {
  return Number.isInteger(value) && value >= -(2 ** 63) && value <= 2 ** 63;
}

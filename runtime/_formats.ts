/**
 * String format checks shared by the compiled validators.
 *
 * @module
 */

const HEX = "[0-9a-fA-F]";

/**
 * The UUID rule as an ECMA-262 pattern without flags (OpenAPI's `pattern` cannot carry any): the
 * text form of a version-4 (random) UUID, with the RFC variant (`8`, `9`, `a` or `b`), in either
 * case.
 */
export const UUID_PATTERN: string = `^${HEX}{8}-${HEX}{4}-4${HEX}{3}-[89abAB]${HEX}{3}-${HEX}{12}$`;
const UUID = new RegExp(UUID_PATTERN);

/** A version-4 UUID in its text form (RFC 9562 variant), in either case. */
export function isUuid(s: string): boolean {
  return s.length === 36 && UUID.test(s);
}

const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
/** The email rule as an ECMA-262 pattern: the HTML form rule with a dotted domain. */
export const EMAIL_PATTERN: string = "^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@" +
  `${LABEL}(?:\\.${LABEL})+$`;
/** The longest email address accepted. */
export const EMAIL_MAX_LENGTH = 254;
const EMAIL = new RegExp(EMAIL_PATTERN);

/** A pragmatic email address check: the HTML form rule, with a dotted domain, at most 254 chars. */
export function isEmail(s: string): boolean {
  return s.length <= EMAIL_MAX_LENGTH && EMAIL.test(s);
}

/**
 * What every URL {@linkcode isUrl} accepts starts with: a scheme and a colon, after any leading
 * spaces or control characters (the parser strips them, and tabs and newlines anywhere).
 */
export const URL_PATTERN = "^[\\x00-\\x20]*[A-Za-z][A-Za-z0-9+.\\t\\n\\r-]*:";

/** An absolute URL the WHATWG parser accepts. */
export function isUrl(s: string): boolean {
  return URL.canParse(s);
}

const D = "[0-9]";
const DAY_29 = `(?:0[1-9]|1${D}|2[0-8])`;
const LEAP_YEAR = `(?:${D}{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)`;
/**
 * The date-time rule of {@linkcode isDateTime} as an ECMA-262 pattern, calendar included: month
 * lengths and February 29 in leap years only.
 */
export const DATE_TIME_PATTERN: string =
  `^(?:${D}{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]${D}|3[01])` +
  `|(?:0[469]|11)-(?:0[1-9]|[12]${D}|30)|02-${DAY_29})|${LEAP_YEAR}-02-29)` +
  `[Tt](?:[01]${D}|2[0-3]):[0-5]${D}(?::(?:[0-5]${D}|60)(?:\\.${D}{1,9})?)?` +
  `(?:[Zz]|[+-](?:[01]${D}|2[0-3]):?[0-5]${D})?$`;

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The value of `n` ASCII digits of `s` from `at`, or -1 when one of them is not a digit. */
function digits(s: string, at: number, n: number): number {
  let value = 0;
  for (let i = at; i < at + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

/**
 * An ISO 8601 date-time: `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH[:]MM]` naming a real calendar date
 * (leap years included) and a valid time of day. A scan of character codes (no regular
 * expression, no allocation): it runs for every date-time field of every validated body.
 */
export function isDateTime(s: string): boolean {
  const length = s.length;
  if (length < 16) return false;
  const year = digits(s, 0, 4), month = digits(s, 5, 2), day = digits(s, 8, 2);
  const hour = digits(s, 11, 2), minute = digits(s, 14, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0) return false;
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58) return false;
  const t = s.charCodeAt(10);
  if (t !== 84 && t !== 116) return false;
  let i = 16;
  let second = 0;
  if (s.charCodeAt(i) === 58) {
    second = digits(s, i + 1, 2);
    if (second < 0 || length < i + 3) return false;
    i += 3;
    if (s.charCodeAt(i) === 46) {
      let n = 0;
      while (n < 9 && i + 1 + n < length && digits(s, i + 1 + n, 1) >= 0) n++;
      if (n === 0) return false;
      i += 1 + n;
    }
  }
  if (i < length) {
    const zone = s.charCodeAt(i);
    if (zone === 90 || zone === 122) {
      i++;
    } else if (zone === 43 || zone === 45) {
      const zh = digits(s, i + 1, 2);
      const colon = s.charCodeAt(i + 3) === 58 ? 1 : 0;
      const zm = digits(s, i + 3 + colon, 2);
      if (zh < 0 || zm < 0 || i + 5 + colon > length) return false;
      if (zh > 23 || zm > 59) return false;
      i += 5 + colon;
    } else {
      return false;
    }
  }
  if (i !== length) return false;
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 && leap ? 29 : DAYS[month - 1];
  return day <= days && hour <= 23 && minute <= 59 && second <= 60;
}

/** Coerces a query/path string to a number; returns the string unchanged when it is not one. */
export function toNumber(s: string): number | string {
  // Starting with a digit or `-` and ending with a digit, `s` has no surrounding space: the
  // usual case skips `trim()`.
  const first = s.charCodeAt(0), last = s.charCodeAt(s.length - 1);
  const plain = last >= 48 && last <= 57 && ((first >= 48 && first <= 57) || first === 45);
  if (!plain && (s === "" || s.trim() !== s)) return s;
  // `Number()` also reads `0x1f`, `0b11` and `0o7`: only decimal notation is a number here
  if (first === 48 && s.length > 2) {
    const radix = s.charCodeAt(1) | 32;
    if (radix === 120 || radix === 98 || radix === 111) return s;
  }
  const n = Number(s);
  return Number.isFinite(n) ? n : s;
}

/** Coerces `true/false/1/0` to a boolean; returns the string unchanged otherwise. */
export function toBoolean(s: string): boolean | string {
  if (s === "true" || s === "1") return true;
  if (s === "false" || s === "0") return false;
  return s;
}

/**
 * String format checks shared by the compiled validators.
 *
 * @module
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const NIL_OR_MAX = /^(?:0{8}-0{4}-0{4}-0{4}-0{12}|f{8}-f{4}-f{4}-f{4}-f{12})$/i;

/** RFC 9562 textual UUID (versions 1-8 with the RFC variant, plus the nil and max UUIDs). */
export function isUuid(s: string): boolean {
  return s.length === 36 && (UUID.test(s) || NIL_OR_MAX.test(s));
}

const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** A pragmatic email address check: the HTML form rule, with a dotted domain, at most 254 chars. */
export function isEmail(s: string): boolean {
  return s.length <= 254 && EMAIL.test(s);
}

/** An absolute URL the WHATWG parser accepts. */
export function isUrl(s: string): boolean {
  return URL.canParse(s);
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|([+-])(\d{2}):?(\d{2}))?$/;

/**
 * An ISO 8601 date-time: `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]` naming a real calendar date
 * (leap years included) and a valid time of day.
 */
export function isDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (!m) return false;
  const year = +m[1], month = +m[2], day = +m[3];
  const hour = +m[4], minute = +m[5], second = m[6] === undefined ? 0 : +m[6];
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (day > days || hour > 23 || minute > 59 || second > 60) return false;
  if (m[7] !== undefined && (+m[8] > 23 || +m[9] > 59)) return false;
  return true;
}

/** Coerces a query/path string to a number; returns the string unchanged when it is not one. */
export function toNumber(s: string): number | string {
  const last = s.charCodeAt(s.length - 1);
  if (last >= 48 && last <= 57) {
    // ends with a digit: no trailing space; a leading one shows in the first character
    const first = s.charCodeAt(0);
    if ((first >= 48 && first <= 57) || first === 45) {
      const n = Number(s);
      return Number.isFinite(n) ? n : s;
    }
  }
  if (s === "" || s.trim() !== s) return s;
  const n = Number(s);
  return Number.isFinite(n) ? n : s;
}

/** Coerces `true/false/1/0` to a boolean; returns the string unchanged otherwise. */
export function toBoolean(s: string): boolean | string {
  if (s === "true" || s === "1") return true;
  if (s === "false" || s === "0") return false;
  return s;
}

import assert from "node:assert/strict";
import {
  DATE_TIME_PATTERN,
  EMAIL_MAX_LENGTH,
  EMAIL_PATTERN,
  isDateTime,
  isEmail,
  isUrl,
  isUuid,
  toNumber,
  URL_PATTERN,
  UUID_PATTERN,
} from "./_formats.ts";

/** The reference: the regular expression the scanner replaced, plus the same calendar checks. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|([+-])(\d{2}):?(\d{2}))?$/;
function reference(s: string): boolean {
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

const SAMPLES = [
  "2026-11-22T10:00:00Z",
  "2026-11-22t10:00:00z",
  "2026-11-22T10:00",
  "2026-11-22T10:00Z",
  "2026-11-22T10:00:00.123456789+02:00",
  "2026-11-22T10:00:00.1234567890Z",
  "2026-11-22T10:00:00.Z",
  "2024-02-29T00:00:00Z",
  "2023-02-29T00:00:00Z",
  "1900-02-29T00:00:00Z",
  "2000-02-29T00:00:00Z",
  "2026-04-31T00:00:00Z",
  "2026-13-01T00:00:00Z",
  "2026-00-01T00:00:00Z",
  "2026-01-00T00:00:00Z",
  "2026-01-01T24:00:00Z",
  "2026-01-01T23:60:00Z",
  "2026-01-01T23:59:60Z",
  "2026-01-01T23:59:61Z",
  "2026-01-01T10:00:00+0530",
  "2026-01-01T10:00:00-05:30",
  "2026-01-01T10:00:00+24:00",
  "2026-01-01T10:00:00+05:60",
  "2026-01-01T10:00:00+5:30",
  "2026-01-01T10:00:00+05:3",
  "2026-01-01T10:00:00 ",
  " 2026-01-01T10:00:00",
  "2026-01-01 10:00:00",
  "2026-1-01T10:00:00",
  "20261-01-01T10:00:00",
  "2026-01-01T10:0",
  "2026-01-01T10:00:0",
  "2026-01-01T10:00:00Zjunk",
  "2026-01-01T10:00+02:00",
  "２０２６-01-01T10:00:00Z",
  "",
  "2026-01-01",
];

/** The samples, each with one character dropped, replaced or inserted from `alphabet`. */
function mutated(samples: readonly string[], alphabet: string): Set<string> {
  const inputs = new Set(samples);
  for (const sample of samples) {
    for (let i = 0; i <= sample.length; i++) {
      inputs.add(sample.slice(0, i) + sample.slice(i + 1));
      for (const c of alphabet) {
        inputs.add(sample.slice(0, i) + c + sample.slice(i + 1));
        inputs.add(sample.slice(0, i) + c + sample.slice(i));
      }
    }
  }
  return inputs;
}

Deno.test("isDateTime() agrees with the reference on hand-picked and mutated inputs", () => {
  const inputs = mutated(SAMPLES, "0123456789-:.TtZz+ ");
  assert.ok(inputs.size > 10_000);
  for (const input of inputs) {
    assert.equal(isDateTime(input), reference(input), JSON.stringify(input));
  }
});

Deno.test("DATE_TIME_PATTERN (the OpenAPI pattern) accepts exactly what isDateTime() accepts", () => {
  const pattern = new RegExp(DATE_TIME_PATTERN);
  const years = ["2024", "2023", "1900", "2000", "2100", "2400", "0000", "0004", "1996"];
  const calendar = years.flatMap((y) =>
    Array.from(
      { length: 13 },
      (_, m) => [28, 29, 30, 31, 32].map((d) => `${y}-${String(m).padStart(2, "0")}-${d}T00:00Z`),
    ).flat()
  );
  const inputs = mutated([...SAMPLES, ...calendar], "0123456789-:.TtZz+ ");
  for (const input of inputs) {
    assert.equal(pattern.test(input), isDateTime(input), JSON.stringify(input));
  }
});

Deno.test("UUID_PATTERN and EMAIL_PATTERN (the OpenAPI patterns) accept exactly what the checks accept", () => {
  const uuid = new RegExp(UUID_PATTERN);
  const uuids = mutated([
    "7c9e6679-7425-40de-944b-e07fc1f90ae7",
    "01890a5d-ac96-774b-bcce-b302099a8057",
    "00000000-0000-0000-0000-000000000000",
    "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
    "2dccfb99-4489-d344-49f3-94b26570ae08",
  ], "0123456789abcdefABCDEFg-");
  for (const input of uuids) assert.equal(uuid.test(input), isUuid(input), input);
  assert.equal(isUuid("2dccfb99-4489-d344-49f3-94b26570ae08"), false);
  // version 4 only: a version-7 UUID and the nil UUID are refused; either case is accepted
  assert.equal(isUuid("01890a5d-ac96-774b-bcce-b302099a8057"), false);
  assert.equal(isUuid("00000000-0000-0000-0000-000000000000"), false);
  assert.equal(isUuid("7C9E6679-7425-40DE-944B-E07FC1F90AE7"), true);

  const email = new RegExp(EMAIL_PATTERN);
  const emails = mutated(["ada@example.com", "a.b+c@x-y.example.org", "o'neil@a.co"], "a.@-+_ 1");
  for (const input of emails) assert.equal(email.test(input), isEmail(input), input);
  const long = "a".repeat(EMAIL_MAX_LENGTH - "@example.com".length) + "@example.com";
  assert.equal(isEmail(long), true);
  assert.equal(isEmail("a" + long), false);
});

Deno.test("URL_PATTERN holds for every URL isUrl() accepts", () => {
  const url = new RegExp(URL_PATTERN);
  const samples = mutated(
    ["https://example.com/a?b#c", "mailto:ada@example.com", "urn:isbn:1"],
    ":/.a1 ",
  );
  for (const input of samples) if (isUrl(input)) assert.ok(url.test(input), input);
});

Deno.test("toNumber() coerces numeric strings and leaves the rest", () => {
  assert.equal(toNumber("42"), 42);
  assert.equal(toNumber("-7"), -7);
  assert.equal(toNumber("1.5"), 1.5);
  assert.equal(toNumber("1e3"), 1000);
  assert.equal(toNumber("1e999"), "1e999");
  assert.equal(toNumber(" 4"), " 4");
  assert.equal(toNumber("4 "), "4 ");
  assert.equal(toNumber(""), "");
  // decimal notation only: hex, binary and octal literals stay strings
  assert.equal(toNumber("0x10"), "0x10");
  assert.equal(toNumber("0B11"), "0B11");
  assert.equal(toNumber("0o7"), "0o7");
  assert.equal(toNumber("007"), 7);
  assert.equal(toNumber("abc"), "abc");
  assert.equal(toNumber("-"), "-");
  assert.equal(toNumber("--1"), "--1");
});

import assert from "node:assert/strict";
import { isDateTime, toNumber } from "./_formats.ts";

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

Deno.test("isDateTime() agrees with the reference on hand-picked and mutated inputs", () => {
  const inputs = new Set(SAMPLES);
  const alphabet = "0123456789-:.TtZz+ ";
  for (const sample of SAMPLES) {
    for (let i = 0; i <= sample.length; i++) {
      inputs.add(sample.slice(0, i) + sample.slice(i + 1));
      for (const c of alphabet) {
        inputs.add(sample.slice(0, i) + c + sample.slice(i + 1));
        inputs.add(sample.slice(0, i) + c + sample.slice(i));
      }
    }
  }
  assert.ok(inputs.size > 10_000);
  for (const input of inputs) {
    assert.equal(isDateTime(input), reference(input), JSON.stringify(input));
  }
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

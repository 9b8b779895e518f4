/**
 * `deno bench runtime/schema_bench.ts`: the compiled validator against a hand-written validation
 * function for the same 7-field object, on valid and invalid input. Target: within 2x on valid.
 *
 * @module
 */

import { ArrayOf, compile, DateIso, Email, Int, Min, MinLength, Optional, Uuid } from "./mod.ts";
import { isDateTime, isEmail, isUuid } from "./_formats.ts";
import type { ValidationIssue } from "./exceptions.ts";

const User = {
  id: Uuid,
  email: Email,
  name: MinLength(1),
  age: Optional(Min(0, Int)),
  tags: ArrayOf(String),
  createdAt: DateIso,
  address: { city: String, zip: String },
};
const compiled = compile(User, "body");

const valid = {
  id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  email: "ada@example.com",
  name: "Ada",
  age: 36,
  tags: ["admin", "ops"],
  createdAt: "2026-11-22T10:00:00Z",
  address: { city: "London", zip: "N1" },
  extra: "dropped",
};
const invalid = { ...valid, id: "nope", email: "ada@", age: -1, tags: ["a", 2], address: {} };

type Out = Record<string, unknown>;

/** What a careful developer writes by hand for the same rules and messages. */
function handWritten(
  input: unknown,
): { ok: true; value: Out } | { ok: false; errors: ValidationIssue[] } {
  const errors: ValidationIssue[] = [];
  const push = (field: string, msg: string) => errors.push({ field, message: `${field} ${msg}` });
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { ok: false, errors: [{ field: "body", message: "body must be an object" }] };
  }
  const v = input as Record<string, unknown>;
  const out: Out = {};
  if (v.id === undefined) push("body.id", "is required");
  else if (typeof v.id !== "string") push("body.id", "must be a string");
  else if (!isUuid(v.id)) push("body.id", "must be a valid UUID");
  else out.id = v.id;
  if (v.email === undefined) push("body.email", "is required");
  else if (typeof v.email !== "string") push("body.email", "must be a string");
  else if (!isEmail(v.email)) push("body.email", "must be a valid email address");
  else out.email = v.email;
  if (v.name === undefined) push("body.name", "is required");
  else if (typeof v.name !== "string") push("body.name", "must be a string");
  else if (v.name.length < 1) push("body.name", "must be at least 1 characters");
  else out.name = v.name;
  if (v.age !== undefined) {
    if (typeof v.age !== "number" || !Number.isInteger(v.age)) {
      push("body.age", "must be an integer");
    } else if (v.age < 0) push("body.age", "must be >= 0");
    else out.age = v.age;
  }
  if (v.tags === undefined) push("body.tags", "is required");
  else if (!Array.isArray(v.tags)) push("body.tags", "must be an array");
  else {
    const tags: string[] = [];
    for (let i = 0; i < v.tags.length; i++) {
      if (typeof v.tags[i] !== "string") push(`body.tags[${i}]`, "must be a string");
      else tags.push(v.tags[i]);
    }
    out.tags = tags;
  }
  if (v.createdAt === undefined) push("body.createdAt", "is required");
  else if (typeof v.createdAt !== "string") push("body.createdAt", "must be a string");
  else if (!isDateTime(v.createdAt)) push("body.createdAt", "must be a valid ISO 8601 date-time");
  else out.createdAt = v.createdAt;
  const a = v.address as Record<string, unknown> | undefined;
  if (a === undefined) push("body.address", "is required");
  else if (typeof a !== "object" || a === null || Array.isArray(a)) {
    push("body.address", "must be an object");
  } else {
    const addr: Out = {};
    if (a.city === undefined) push("body.address.city", "is required");
    else if (typeof a.city !== "string") push("body.address.city", "must be a string");
    else addr.city = a.city;
    if (a.zip === undefined) push("body.address.zip", "is required");
    else if (typeof a.zip !== "string") push("body.address.zip", "must be a string");
    else addr.zip = a.zip;
    out.address = addr;
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: out };
}

if (!compiled(valid).ok || handWritten(valid).ok !== true) {
  throw new Error("bench inputs are wrong");
}
if (JSON.stringify(compiled(invalid)) !== JSON.stringify(handWritten(invalid))) {
  throw new Error("compiled and hand-written validators disagree on invalid input");
}

Deno.bench({
  name: "hand-written, valid",
  group: "valid",
  baseline: true,
  fn: () => void handWritten(valid),
});
Deno.bench({ name: "compiled, valid", group: "valid", fn: () => void compiled(valid) });
Deno.bench({
  name: "hand-written, invalid",
  group: "invalid",
  baseline: true,
  fn: () => void handWritten(invalid),
});
Deno.bench({ name: "compiled, invalid", group: "invalid", fn: () => void compiled(invalid) });

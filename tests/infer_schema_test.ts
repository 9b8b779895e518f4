// Type tests for InferSchema: `deno check` fails if any @ts-expect-error line stops being an error.
import assert from "node:assert/strict";
import {
  ArrayOf,
  DateIso,
  Desc,
  Email,
  type InferSchema,
  Int,
  Min,
  Optional,
  schema,
  Stream,
} from "@fw/runtime";

const Address = schema("Address", { city: String, zip: Optional(String) });
const User = schema("User", {
  email: Email,
  age: Optional(Min(0, Int)),
  nick: Desc("Shown name", Optional(String)),
  tags: ArrayOf(String),
  address: Address,
  meta: { active: Boolean, since: DateIso, scores: ArrayOf(Number) },
});
type User = InferSchema<typeof User>;

Deno.test("InferSchema makes optional fields optional properties and keeps the rest required", () => {
  const ok: User = {
    email: "a@b.co",
    tags: [],
    address: { city: "Oslo" },
    meta: { active: true, since: "2026-01-01T00:00Z", scores: [1] },
  };
  const full: User = { ...ok, age: 3, nick: "ada", address: { city: "Oslo", zip: "0150" } };
  assert.equal(full.age, 3);

  // @ts-expect-error: age must be a number
  const badAge: User = { ...ok, age: "3" };
  // @ts-expect-error: email is required
  const noEmail: User = { tags: [], address: { city: "x" }, meta: ok.meta };
  // @ts-expect-error: tags must be strings
  const badTags: User = { ...ok, tags: [1] };
  // @ts-expect-error: nested field types are inferred too
  const badNested: User = { ...ok, meta: { ...ok.meta, active: "yes" } };
  assert.ok(badAge && noEmail && badTags && badNested);
});

Deno.test("InferSchema of primitives, arrays and streams", () => {
  const s: InferSchema<typeof String> = "x";
  const n: InferSchema<typeof Int> = 1;
  const list: InferSchema<ReturnType<typeof ArrayOf<typeof Int>>> = [1, 2];
  const stream = Stream({ text: String });
  const messages: InferSchema<typeof stream> = (async function* () {
    yield { text: "hi" };
  })();
  // @ts-expect-error: a string is not an Int
  const wrong: InferSchema<typeof Int> = "1";
  assert.ok(s && n && list.length && messages && wrong);
});

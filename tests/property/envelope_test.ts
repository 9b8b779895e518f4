import assert from "node:assert/strict";
import { envelopeProblem, MemoryBroker, serveLocalBroker } from "@fw/events";
import { decodeEnvelope } from "../../events/transports/cloud/_codec.ts";
import { check, fc } from "./_property.ts";

const valid = {
  id: "m1",
  topic: "t",
  traceId: "x",
  payload: { n: 1 },
  attributes: {},
  publishedAt: 1,
};

/** Bytes: random, UTF-8 of random text, JSON of random values, and mangled valid envelopes. */
const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => new TextEncoder().encode(s)),
  fc.jsonValue({ maxDepth: 3 }).map((v) => new TextEncoder().encode(JSON.stringify(v))),
  fc.record({
    field: fc.constantFrom(...Object.keys(valid), "key", "channel", "__proto__"),
    value: fc.jsonValue({ maxDepth: 2 }),
  }).map(({ field, value }) =>
    new TextEncoder().encode(
      JSON.stringify(valid).replace("{", `{${JSON.stringify(field)}:${JSON.stringify(value)},`),
    )
  ),
  fc.tuple(fc.nat(120), fc.uint8Array({ minLength: 1, maxLength: 4 })).map(([at, junk]) => {
    const good = new TextEncoder().encode(JSON.stringify(valid));
    const out = new Uint8Array(good.length + junk.length);
    const cut = Math.min(at, good.length);
    out.set(good.subarray(0, cut));
    out.set(junk, cut);
    out.set(good.subarray(cut), cut + junk.length);
    return out;
  }),
);

Deno.test("decodeEnvelope() and envelopeProblem() never throw on arbitrary bytes", () => {
  const attributes = fc.option(
    fc.dictionary(fc.constantFrom("fw.envelope", "fw.id", "x"), fc.constantFrom("1", "0", "")),
    { nil: undefined },
  );
  check(fc.property(bytes, attributes, (data, attrs) => {
    const decoded = decodeEnvelope(data, attrs);
    if (!decoded.ok) {
      assert.equal(typeof decoded.reason, "string");
      return;
    }
    const problem = envelopeProblem(decoded.envelope);
    if (problem === undefined) {
      const e = decoded.envelope as Record<string, unknown>;
      assert.equal(typeof e.id, "string");
      assert.equal(typeof e.topic, "string");
      assert.equal(typeof e.publishedAt, "number");
    } else assert.equal(typeof problem, "string");
  }));
});

Deno.test("envelopeProblem() never throws on any value, however odd", () => {
  check(
    fc.property(fc.anything({ withNullPrototype: true, withMap: true, withBigInt: true }), (v) => {
      const problem = envelopeProblem(v);
      assert.ok(problem === undefined || typeof problem === "string");
    }),
  );
});

Deno.test("the local HTTP broker answers arbitrary publish bodies with a 4xx, never a 5xx", async () => {
  const broker = new MemoryBroker();
  const local = serveLocalBroker(broker, { port: 0 });
  try {
    await check(
      fc.asyncProperty(bytes, async (data) => {
        const res = await fetch(`${local.url}/publish`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: data,
        });
        await res.body?.cancel();
        assert.ok(res.status < 500, `status ${res.status}`);
      }),
      60,
    );
  } finally {
    await local.close();
    await broker.close();
  }
});

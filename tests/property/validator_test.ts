import assert from "node:assert/strict";
import { compile, type SchemaNode, type ValidationIssue } from "@fw/runtime";
import { check, fc } from "./_property.ts";

// ---------------------------------------------------------------- generated schemas

const PATTERNS = [/^[a-z]+$/, /\d/, /^$/];

const stringNode: fc.Arbitrary<SchemaNode> = fc.record({
  kind: fc.constant("string" as const),
  minLength: fc.option(fc.nat(4), { nil: undefined }),
  maxLength: fc.option(fc.nat(6), { nil: undefined }),
  pattern: fc.option(fc.constantFrom(...PATTERNS), { nil: undefined }),
}, { requiredKeys: ["kind"] });

const numberNode: fc.Arbitrary<SchemaNode> = fc.record({
  kind: fc.constantFrom("number" as const, "integer" as const),
  minimum: fc.option(fc.integer({ min: -5, max: 5 }), { nil: undefined }),
  maximum: fc.option(fc.integer({ min: -5, max: 50 }), { nil: undefined }),
}, { requiredKeys: ["kind"] });

const booleanNode: fc.Arbitrary<SchemaNode> = fc.constant({ kind: "boolean" as const });
const scalarNode = fc.oneof(stringNode, numberNode, booleanNode);
const KEYS = ["a", "b", "id", "toString", "constructor", "hasOwnProperty"];

function clean<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

const { node: jsonNode } = fc.letrec<{ node: SchemaNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalarNode,
    tie("node").map((items) => ({ kind: "array" as const, items })),
    fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), tie("node"), fc.boolean()), {
      maxLength: 4,
      selector: ([k]) => k,
    }).map((props) => ({
      kind: "object" as const,
      properties: Object.fromEntries(
        props.map(([k, n, optional]) => [k, optional ? { ...n, optional: true } : n]),
      ),
    })),
  ),
}));

const flatNode = (withArrays: boolean): fc.Arbitrary<SchemaNode> =>
  fc.uniqueArray(
    fc.tuple(
      fc.constantFrom(...KEYS),
      withArrays
        ? fc.oneof(scalarNode, scalarNode.map((items) => ({ kind: "array" as const, items })))
        : scalarNode,
      fc.boolean(),
    ),
    { maxLength: 4, selector: ([k]) => k },
  ).map((props) => ({
    kind: "object" as const,
    properties: Object.fromEntries(
      props.map(([k, n, optional]) => [k, optional ? { ...n, optional: true } : n]),
    ),
  }));

// ---------------------------------------------------------------- the reference

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function coerceNumber(s: string): number | string {
  if (!NUMERIC.test(s)) return s;
  const n = Number(s);
  return Number.isFinite(n) ? n : s;
}

function coerceBoolean(s: string): boolean | string {
  return s === "true" || s === "1" ? true : s === "false" || s === "0" ? false : s;
}

class Reference {
  errors: ValidationIssue[] = [];
  constructor(readonly coerce: boolean) {}
  fail(field: string, suffix: string): void {
    if (this.errors.length < 100) this.errors.push({ field, message: field + suffix });
  }
  value(node: SchemaNode, v: unknown, field: string): unknown {
    switch (node.kind) {
      case "string": {
        if (typeof v !== "string") return this.fail(field, " must be a string");
        if (node.minLength !== undefined && v.length < node.minLength) {
          this.fail(field, ` must be at least ${node.minLength} characters`);
        }
        if (node.maxLength !== undefined && v.length > node.maxLength) {
          this.fail(field, ` must be at most ${node.maxLength} characters`);
        }
        if (node.pattern && !node.pattern.test(v)) {
          this.fail(field, ` must match pattern ${node.pattern.source}`);
        }
        return v;
      }
      case "number":
      case "integer": {
        if (this.coerce && typeof v === "string") v = coerceNumber(v);
        const ok = typeof v === "number" &&
          (node.kind === "integer" ? Number.isInteger(v) : Number.isFinite(v));
        if (!ok) {
          return this.fail(
            field,
            ` must be ${node.kind === "integer" ? "an integer" : "a number"}`,
          );
        }
        if (node.minimum !== undefined && (v as number) < node.minimum) {
          this.fail(field, ` must be >= ${node.minimum}`);
        }
        if (node.maximum !== undefined && (v as number) > node.maximum) {
          this.fail(field, ` must be <= ${node.maximum}`);
        }
        return v;
      }
      case "boolean":
        if (this.coerce && typeof v === "string") v = coerceBoolean(v);
        if (typeof v !== "boolean") return this.fail(field, " must be a boolean");
        return v;
      case "array": {
        if (!Array.isArray(v)) return this.fail(field, " must be an array");
        return v.map((x, i) => this.value(node.items!, x, `${field}[${i}]`));
      }
      default: {
        if (typeof v !== "object" || v === null || Array.isArray(v)) {
          return this.fail(field, " must be an object");
        }
        return this.properties(
          node,
          (k) => Object.hasOwn(v as object, k) ? (v as Record<string, unknown>)[k] : undefined,
          field,
        );
      }
    }
  }
  properties(node: SchemaNode, read: (k: string) => unknown, field: string) {
    const out: Record<string, unknown> = {};
    for (const [key, prop] of Object.entries(node.properties ?? {})) {
      const x = read(key);
      if (x === undefined) {
        if (!prop.optional) this.fail(`${field}.${key}`, " is required");
        continue;
      }
      out[key] = this.value(prop, x, `${field}.${key}`);
    }
    return out;
  }
}

function reference(node: SchemaNode, input: unknown, area: string) {
  const r = new Reference(area === "params" || area === "query");
  let value: unknown;
  if (area === "query") {
    const q = input as URLSearchParams;
    value = r.properties(node, (k) => {
      const prop = node.properties![k];
      if (prop.kind === "array") return q.has(k) ? q.getAll(k) : undefined;
      return q.get(k) ?? undefined;
    }, area);
  } else value = r.value(node, input, area);
  return r.errors.length ? { ok: false, errors: r.errors } : { ok: true, value };
}

// ---------------------------------------------------------------- inputs

const numberText = fc.oneof(
  fc.integer({ min: -100, max: 100 }).map(String),
  fc.double({ noNaN: true }).map(String),
  fc.constantFrom("", " 1", "1 ", "0x10", "0b11", "0o7", "1e3", "+5", ".5", "5.", "1_000"),
  fc.constantFrom("Infinity", "-Infinity", "NaN", "1e400", "-0", "00012", "1.0", "true", "0"),
  fc.constantFrom("1", "false", "yes", "abc", "12abc", "\t3", "\n4"),
);

function valueFor(node: SchemaNode, depth = 0): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.constantFrom(null, 1.5, "x", [], {}));
  let right: fc.Arbitrary<unknown>;
  switch (node.kind) {
    case "string":
      right = fc.oneof(fc.string({ maxLength: 8 }), fc.stringMatching(/^[a-z]{0,7}$/));
      break;
    case "number":
    case "integer":
      right = fc.oneof(fc.integer({ min: -10, max: 60 }), fc.double({ min: -10, max: 60 }));
      break;
    case "boolean":
      right = fc.boolean();
      break;
    case "array":
      right = fc.array(valueFor(node.items!, depth + 1), { maxLength: 3 });
      break;
    default: {
      const props = Object.entries(node.properties ?? {});
      right = fc.tuple(
        ...props.map(([, p]) => fc.option(valueFor(p, depth + 1), { nil: undefined })),
        fc.dictionary(fc.constantFrom("extra", "__proto__", "b"), fc.jsonValue({ maxDepth: 1 }), {
          maxKeys: 2,
        }),
      ).map((values) => {
        const out: Record<string, unknown> = { ...(values[values.length - 1] as object) };
        props.forEach(([k], i) => {
          if (values[i] !== undefined) out[k] = values[i];
        });
        return out;
      });
    }
  }
  return depth > 3
    ? right
    : fc.oneof({ arbitrary: right, weight: 5 }, { arbitrary: wrong, weight: 1 });
}

function scalarText(node: SchemaNode): fc.Arbitrary<string> {
  if (node.kind === "boolean") return fc.constantFrom("true", "false", "1", "0", "yes", "", "TRUE");
  if (node.kind === "string") return fc.string({ maxLength: 6 });
  return numberText;
}

const comparable = (result: unknown) => JSON.parse(JSON.stringify(result));

// ---------------------------------------------------------------- properties

Deno.test("compile() for JSON areas agrees with a reference validator on generated schemas", () => {
  check(
    fc.property(
      jsonNode.chain((node) => fc.tuple(fc.constant(node), valueFor(node))),
      ([node, input]) => {
        const validate = compile({ node: clean(node) }, "body");
        assert.deepEqual(comparable(validate(input)), comparable(reference(node, input, "body")));
      },
    ),
  );
});

Deno.test("compile() for params coerces like the reference on generated flat schemas", () => {
  const case_ = flatNode(false).chain((node) =>
    fc.tuple(
      fc.constant(node),
      fc.tuple(
        ...Object.entries(node.properties!).map(([k, p]) =>
          fc.option(scalarText(p).map((t) => [k, t] as const), { nil: undefined })
        ),
      ).map((pairs) => Object.fromEntries(pairs.filter((p) => p !== undefined))),
    )
  );
  check(fc.property(case_, ([node, params]) => {
    const validate = compile({ node }, "params");
    assert.deepEqual(comparable(validate(params)), comparable(reference(node, params, "params")));
  }));
});

Deno.test("compile() for query reads repeated keys and coerces like the reference", () => {
  const case_ = flatNode(true).filter((node) => Object.keys(node.properties!).length > 0).chain((
    node,
  ) =>
    fc.tuple(
      fc.constant(node),
      fc.array(
        fc.constantFrom(...Object.entries(node.properties!)).chain(([k, p]) =>
          scalarText(p.kind === "array" ? p.items! : p).map((t) => [k, t] as [string, string])
        ),
        { maxLength: 6 },
      ),
    )
  );
  check(fc.property(case_, ([node, pairs]) => {
    const validate = compile({ node }, "query");
    const q = new URLSearchParams(pairs);
    assert.deepEqual(comparable(validate(q)), comparable(reference(node, q, "query")));
  }));
});

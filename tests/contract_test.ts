/**
 * Contract tests generated from each example's live OpenAPI document: Portman turns
 * `/openapi.json` into a Postman collection (tests/contract/_plan.ts says what it checks) and
 * newman runs it against the running app. Every documented success answers as documented with
 * data generated from the document; every request built to break one documented rule gets the
 * documented 4xx with the documented body. The npm tools are pinned in tests/contract/ and
 * installed with `npm ci` on first use (`deno task contract` runs this file alone).
 */

import assert from "node:assert/strict";
import { plan, type PlanOptions } from "./contract/_plan.ts";
import { ensureTools, portmanNewman, startExample } from "./contract/_tools.ts";
import { signToken } from "../examples/shop/src/token.ts";

const SECRET = "contract-test-secret-0123456789abcdef";

/** Runs the plan of one example and checks that every request it documents ran and passed. */
async function contract(
  entry: string,
  env: Record<string, string>,
  options: PlanOptions,
) {
  await ensureTools();
  const app = await startExample(entry, env);
  const dir = await Deno.makeTempDir({ prefix: "fw-contract-" });
  try {
    const document = await (await fetch(`${app.url}/openapi.json`)).json();
    const { config, successes, unbreakable } = plan(document, options);
    const skipped = (name: string) =>
      Object.keys(options.skipSuccess ?? {}).some((op) => name === itemName(document, op));
    const run = await portmanNewman(dir, document, config, app.url, skipped);
    console.log(
      `${entry}: ${run.executed.length} requests, ${run.assertions} assertions, ` +
        `${run.failures.length} failures`,
    );
    assert.deepEqual(run.failures, [], `newman failures against ${entry}`);
    const names = new Set(run.executed.map((e) => e.name));
    for (const op of successes) {
      assert.ok(
        names.has(itemName(document, op)),
        `${op}: its success request did not run`,
      );
    }
    const variations = run.executed.filter((e) => e.name.includes("["));
    for (
      const op of Object.keys(document.paths).flatMap((p) => ops(document, p))
    ) {
      if (unbreakable[op]) continue;
      const base = itemName(document, op);
      assert.ok(
        variations.some((v) => v.name.startsWith(base + "[") && v.status >= 400),
        `${op}: no request breaking a documented rule ran`,
      );
    }
    return { run, unbreakable };
  } finally {
    await app.stop();
    // FW_CONTRACT_KEEP=1 keeps the document, Portman configuration, collection and newman report
    if (Deno.env.get("FW_CONTRACT_KEEP")) {
      console.log(`contract files of ${entry}: ${dir}`);
    } else await Deno.remove(dir, { recursive: true });
  }
}

function ops(
  document: { paths: Record<string, Record<string, unknown>> },
  path: string,
) {
  return Object.keys(document.paths[path]).map((m) => `${m.toUpperCase()}::${path}`);
}

/** The collection item name Portman gives an operation (its summary, else the operation id). */
function itemName(
  document: { paths: Record<string, Record<string, unknown>> },
  op: string,
) {
  const [method, path] = op.split("::");
  const id = (document.paths[path][method.toLowerCase()] as { operationId: string })
    .operationId;
  return id.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(
    /^./,
    (c) => c.toLowerCase(),
  );
}

Deno.test("contract: examples/app answers as its OpenAPI document says", async () => {
  const { run, unbreakable } = await contract("examples/app/src/main.ts", {
    EVENTS_BROKER_PORT: "0",
  }, {
    // PUT and GET /users/{id} need a user that exists: the one POST /users created
    assignVariables: [{
      openApiOperation: "POST::/users",
      collectionVariables: [{ responseBodyProp: "id", name: "userId" }],
    }],
    overwrites: [{
      openApiOperationIds: ["getUsersById", "putUsersById"],
      overwriteRequestPathVariables: [{
        key: "id",
        value: "{{userId}}",
        overwrite: true,
      }],
    }, {
      // the generated example of `tags` is sometimes an empty array, and Portman's "maximum
      // length tags[0]" variation then sends the body unchanged (valid, so 201, not 400): a fixed
      // tag gives that variation a value to lengthen
      openApiOperationIds: ["postUsers", "putUsersById"],
      overwriteRequestBody: [{ key: "tags", value: ["admin"], overwrite: true }],
    }],
  });
  assert.ok(run.assertions > 100, `only ${run.assertions} assertions ran`);
  assert.deepEqual(Object.keys(unbreakable).sort(), [
    "GET::/files/{path}",
    "GET::/health",
    "GET::/redirect",
  ]);
});

Deno.test("contract: examples/shop answers as its OpenAPI document says", async () => {
  const token = (scope?: string) =>
    signToken({
      secret: SECRET,
      issuer: "shop-dev",
      audience: "shop-api",
      scope,
    });
  const { run, unbreakable } = await contract("examples/shop/src/main.ts", {
    SHOP_JWT_SECRET: SECRET,
    SHOP_KV_PATH: ":memory:",
  }, {
    skipSuccess: {
      "GET::/orders/live": "an endless Server-Sent Events stream",
    },
    tokens: { valid: await token(), weak: await token("shop:reader") },
    orderOfFolders: ["products", "orders", "admin", "health"],
    // an order names products that exist, in a quantity in stock; GET /orders/{id} and
    // GET /products/{sku} read ones that exist
    assignVariables: [
      {
        openApiOperation: "GET::/products",
        collectionVariables: [{ responseBodyProp: "[0].sku", name: "sku" }],
      },
      {
        openApiOperation: "POST::/orders",
        collectionVariables: [{ responseBodyProp: "id", name: "orderId" }],
      },
    ],
    overwrites: [
      {
        openApiOperation: "POST::/orders",
        overwriteRequestBody: [{
          key: "items",
          value: [{ sku: "{{sku}}", qty: 1 }],
        }],
      },
      {
        openApiOperation: "GET::/orders/{id}",
        overwriteRequestPathVariables: [{
          key: "id",
          value: "{{orderId}}",
          overwrite: true,
        }],
      },
      {
        openApiOperation: "GET::/products/{sku}",
        overwriteRequestPathVariables: [{
          key: "sku",
          value: "{{sku}}",
          overwrite: true,
        }],
      },
    ],
  });
  assert.ok(run.assertions > 100, `only ${run.assertions} assertions ran`);
  assert.deepEqual(unbreakable, {});
});

Deno.test("contract: examples/streams answers as its OpenAPI document says", async () => {
  const { run, unbreakable } = await contract(
    "examples/streams/src/main.ts",
    {},
    {
      skipSuccess: {
        "GET::/feed": "an endless Server-Sent Events stream",
        "GET::/chat/{room}": "a WebSocket, which newman cannot open",
      },
    },
  );
  assert.ok(run.assertions > 20, `only ${run.assertions} assertions ran`);
  assert.deepEqual(unbreakable, {});
});

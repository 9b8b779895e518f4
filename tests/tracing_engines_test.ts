/**
 * Distributed tracing on every engine: the round trip of `_tracing.ts` (request -> publish ->
 * two attempts -> ack) must be one trace, with the same parentage and attribute names, whatever
 * carried the message: the local HTTP broker, Redis Streams, PostgreSQL (a plain publish and the
 * outbox, in the caller's transaction), NATS JetStream and Deno KV. Each engine runs under a
 * fresh prefix, schema, stream or database file, removed afterwards.
 */

import assert from "node:assert/strict";
import { MemoryBroker, serveLocalBroker } from "@fw/events";
import { httpBrokerTransport } from "@fw/events";
import { kvStreamTransport } from "@fw/events/kvstore";
import { type SqlClient, sqlTransport } from "@fw/events/sql";
import { cloudPubSubTransport } from "@fw/events/cloud";
import { natsJetStreamClient } from "@fw/events/cloud-nats";
import { denoKvTransport } from "@fw/events/denokv";
import {
  admin,
  dropSchemas,
  PG_URL,
  randomSchema,
} from "../events/transports/sql/testdata/pg_env.ts";
import { NATS_ADDRESS, natsReachable } from "../events/transports/cloud/testdata/nats_server.ts";
import { checkTrace, roundTrip } from "./_tracing.ts";

const run = crypto.randomUUID().slice(0, 8);

Deno.test("tracing: one trace over the local HTTP broker", async () => {
  const broker = new MemoryBroker();
  const server = serveLocalBroker(broker, { port: 0 });
  try {
    const { spans } = await roundTrip({ transport: httpBrokerTransport({ url: server.url }) });
    checkTrace(spans, "local");
  } finally {
    await server.close();
    await broker.close();
  }
});

Deno.test("tracing: one trace over Redis Streams", async () => {
  const prefix = `fwtrace:${run}:`;
  try {
    const { spans } = await roundTrip({
      transport: kvStreamTransport({ url: "redis://127.0.0.1:6379", keyPrefix: prefix }),
    });
    checkTrace(spans, "redis");
  } finally {
    const out = await new Deno.Command("redis-cli", {
      args: [
        "EVAL",
        "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end",
        "0",
        `${prefix}*`,
      ],
      stdout: "null",
    }).output();
    assert.ok(out.success, "the test's Redis keys were removed");
  }
});

Deno.test("tracing: one trace over PostgreSQL, for a plain publish and the outbox", async () => {
  const schemas = [randomSchema("trace"), randomSchema("trace_tx")];
  const conn = await admin();
  try {
    const plain = await roundTrip({ transport: sqlTransport({ url: PG_URL, schema: schemas[0] }) });
    checkTrace(plain.spans, "postgresql");
    type Begin = { begin<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> };
    const sql = conn.sql as SqlClient & Begin;
    const outbox = await roundTrip({
      transport: sqlTransport({ client: sql, schema: schemas[1] }),
      publishWith: (publish) => sql.begin((tx) => publish(tx)),
    });
    const { publish } = checkTrace(outbox.spans, "postgresql");
    assert.equal(publish.status.code, 0, "the outbox publish succeeded");
  } finally {
    await conn.close();
    await dropSchemas(schemas);
  }
});

Deno.test({
  name: "tracing: one trace over NATS JetStream",
  ignore: !(await natsReachable()) && !Deno.env.get("CI"),
  fn: async () => {
    const stream = `FWTRACE_${run}`;
    const client = await natsJetStreamClient({
      servers: NATS_ADDRESS,
      stream,
      subjectPrefix: stream.toLowerCase(),
    });
    try {
      const { spans } = await roundTrip({
        transport: cloudPubSubTransport({ client, closeClient: false }),
      });
      checkTrace(spans, "nats");
    } finally {
      await client.deleteStream();
      await client.close();
    }
  },
});

Deno.test("tracing: one trace over Deno KV", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fw-trace-kv-" });
  try {
    const { spans } = await roundTrip({ transport: denoKvTransport({ path: `${dir}/kv.sqlite` }) });
    checkTrace(spans, "denokv");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

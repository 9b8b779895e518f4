/**
 * The NATS row of `deno task bench:events`: `cloudPubSubTransport` over `natsJetStreamClient` on
 * the NATS server at 127.0.0.1:4222 (file storage), one fresh stream per run, deleted after it;
 * its peer row `nats-raw`, the same messages straight on the NATS client; and `nats-r1` beside
 * `nats-r3`, the same transport on a private single server and on a private three-node cluster
 * with three replicas per stream.
 *
 * This file imports the NATS packages for the peer row (the root `deno.json` maps them, as
 * bench-only imports; `@fw/events` itself imports them only in `nats_jetstream.ts`).
 *
 * @module
 */

import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, headers } from "@nats-io/transport-node";
import type { Transport } from "@fw/events";
import { cloudPubSubTransport } from "@fw/events/cloud";
import { NatsJetStreamClient } from "@fw/events/cloud-nats";
import {
  NATS_ADDRESS,
  natsReachable,
  PrivateNatsServer,
} from "../events/transports/cloud/testdata/nats_server.ts";
import { hasNatsServer, NatsCluster } from "../events/transports/cloud/testdata/nats_cluster.ts";

/**
 * A factory of NATS transports for the benchmark, or `undefined` (with the reason printed) when
 * no NATS server answers.
 */
export async function natsBenchTransport(): Promise<(() => Promise<Transport>) | undefined> {
  if (!(await natsReachable())) {
    console.error(`nats skipped: no NATS server answers on ${NATS_ADDRESS}`);
    return undefined;
  }
  return () => Promise.resolve(benchTransport([NATS_ADDRESS], 1));
}

/** A transport on a fresh stream of its own, removed when the transport closes. */
function benchTransport(servers: string[], replicas: number): Transport {
  const stream = `BENCH_${crypto.randomUUID().slice(0, 8)}`;
  const client = new NatsJetStreamClient({
    servers,
    stream,
    subjectPrefix: stream.toLowerCase(),
    replicas,
  });
  const inner = cloudPubSubTransport({ client, closeClient: false });
  const transport: Transport = {
    name: inner.name,
    capabilities: inner.capabilities,
    deadLetters: inner.deadLetters,
    publish: (e, o) => inner.publish(e, o),
    subscribe: (spec, listener) => inner.subscribe(spec, listener),
    deadLetter: (e) => inner.deadLetter(e),
    close: async () => {
      await inner.close();
      await client.deleteStream();
      await client.close();
    },
  };
  return transport;
}

/** The `nats-r1` and `nats-r3` rows: a private server, a private cluster and their transports. */
export interface NatsClusterBench {
  /** A transport on a fresh stream on the private single server. */
  single: () => Promise<Transport>;
  /** A transport on a fresh stream with three replicas on the cluster. */
  cluster: () => Promise<Transport>;
  /** Stops the server and the cluster. */
  close: () => Promise<void>;
}

/**
 * The `nats-r1` and `nats-r3` rows: the same transport on a single `nats-server -js` and on a
 * three-node JetStream cluster, both the benchmark's own (free ports, file storage in temporary
 * directories, so no other user of the shared server skews the pair), every cluster stream with
 * three replicas and the client given all three nodes. `undefined` (with the reason printed) when
 * no `nats-server` binary is on the PATH.
 */
export async function natsClusterBench(): Promise<NatsClusterBench | undefined> {
  if (!(await hasNatsServer())) {
    console.error("nats-r1 and nats-r3 skipped: no nats-server binary on PATH");
    return undefined;
  }
  const server = new PrivateNatsServer();
  const cluster = new NatsCluster();
  await server.start();
  await cluster.start();
  return {
    single: () => Promise.resolve(benchTransport([server.address], 1)),
    cluster: () => Promise.resolve(benchTransport(cluster.servers, 3)),
    close: async () => {
      await cluster.close();
      await server.close();
    },
  };
}

/** Throughput and latency of one run (the shape `bench_events.ts` prints). */
export interface NatsBenchResult {
  /** Messages per second. */
  rate: number;
  /** Median latency, ms. */
  p50: number;
  /** 99th percentile latency, ms. */
  p99: number;
}

/**
 * The peer row `nats-raw`: the same work straight on the NATS client with no fw in between. It
 * publishes the same JSON body with the same headers and `Nats-Msg-Id`, 256 publishes in flight
 * and at most `window` unhandled, and a pull consumer parses each body and acks it.
 *
 * @param n Messages.
 * @param window Most messages published but not yet handled.
 */
export async function runRawNats(n: number, window: number): Promise<NatsBenchResult> {
  const stream = `BENCHRAW_${crypto.randomUUID().slice(0, 8)}`;
  const subject = `${stream.toLowerCase()}.bench.order`;
  const pub = await connect({ servers: NATS_ADDRESS });
  const sub = await connect({ servers: NATS_ADDRESS });
  const jsm = await jetstreamManager(pub);
  try {
    await jsm.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.>`] });
    await jsm.consumers.add(stream, {
      durable_name: "bench",
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
      filter_subject: subject,
      max_ack_pending: 1000,
    });
    const latencies = new Float64Array(n);
    const sent = new Float64Array(n);
    let handled = 0;
    let done!: () => void;
    const finished = new Promise<void>((r) => done = r);
    let wake: (() => void) | undefined;
    const consumer = await jetstream(sub).consumers.get(stream, "bench");
    const messages = await consumer.consume({
      max_messages: 500,
      callback: (m) => {
        const e = JSON.parse(new TextDecoder().decode(m.data));
        latencies[e.payload.items] = performance.now() - sent[e.payload.items];
        m.ack();
        handled++;
        if (wake && handled % 64 === 0) wake();
        if (handled === n) done();
      },
    });
    const js = jetstream(pub);
    const start = performance.now();
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      sent[i] = performance.now();
      const envelope = {
        id: crypto.randomUUID(),
        topic: "bench.order",
        payload: { id: "6f1c2a5e-8a3b-4f1e-9d2c-1b2a3c4d5e6f", customer: "c", items: i, total: 5 },
        attributes: {},
        traceId: "0af7651916cd43dd8448eb211c80319c",
        publishedAt: Date.now(),
      };
      const h = headers();
      h.set("fw.envelope", "1");
      h.set("fw.id", envelope.id);
      inflight.push(
        js.publish(subject, new TextEncoder().encode(JSON.stringify(envelope)), {
          headers: h,
          msgID: `bench.order:${envelope.id}:${envelope.publishedAt}`,
        }),
      );
      if (inflight.length >= 256) {
        await Promise.all(inflight);
        inflight.length = 0;
      }
      while (i - handled >= window) await new Promise<void>((r) => wake = r);
    }
    await Promise.all(inflight);
    await finished;
    const elapsed = performance.now() - start;
    await messages.close();
    latencies.sort();
    const at = (p: number) => latencies[Math.min(n - 1, Math.floor(n * p))];
    return { rate: n / (elapsed / 1000), p50: at(0.5), p99: at(0.99) };
  } finally {
    await jsm.streams.delete(stream).catch(() => {});
    await pub.close();
    await sub.close();
  }
}

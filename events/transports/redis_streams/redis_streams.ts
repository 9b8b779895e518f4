/**
 * `kvStreamTransport({ url, keyPrefix })`: a persistent, multi-process transport on Redis Streams
 * (Redis 7.0 or later).
 *
 * - A publish appends the envelope to the topic's stream `<keyPrefix>{<topic>}` (one Lua script:
 *   the `dedupeKey` check and the `XADD`), when the topic has a stream, that is, when some group
 *   ever subscribed. Topics nobody subscribes to get nothing, as on the other transports.
 * - A handler group is a Redis consumer group on that stream (competing: its instances share the
 *   entries); a broadcast instance gets a Redis group of its own, registered with a heartbeat and
 *   removed when it is gone (`_registry.ts`).
 * - Each subscription reads with `XREADGROUP ... BLOCK` on a dedicated connection (`_reader.ts`),
 *   acknowledges with `XACK`, retries through its group's delayed set and retry stream
 *   (`_retry.ts`) on the consumer's back-off, and takes over entries a dead consumer held with
 *   `XAUTOCLAIM`.
 * - Dead letters with no `<topic>.dlq` group are kept in Redis ({@linkcode RedisDeadLetters}).
 * - A delayed publish waits in the topic's scheduled set until a subscribing process moves it onto
 *   the stream (`_scheduled.ts`).
 *
 * @module
 */

import type { TimerHandle } from "@fw/runtime";
import {
  closeRedisClient,
  openRedis,
  redactRedisUrl,
  type RedisClient,
  type RedisConnections,
} from "../../_redis.ts";
import { sendCommandAt } from "../../_redis_cluster.ts";
import type { Envelope } from "../../envelope.ts";
import type {
  DeliveryListener,
  QueueStats,
  Subscription,
  SubscriptionSpec,
  Transport,
  TransportCapabilities,
  TransportPublishOptions,
} from "../../transport.ts";
import { Deadlines, settleBy } from "./_deadline.ts";
import { inspectRedis } from "./_inspect.ts";
import { hashKey, instanceMember, keys, partName, redisGroup } from "./_keys.ts";
import {
  type KvStreamTransportOptions,
  OWNER,
  type ResolvedOptions,
  resolveOptions,
} from "./_options.ts";
import { Reader } from "./_reader.ts";
import { beat, reap, reapMember, trimStream } from "./_registry.ts";
import { PUBLISH, PUBLISH_MANY } from "./_scripts.ts";
import { REDIS_MAX_DELAY_MS, ScheduledMovers } from "./_scheduled.ts";
import { RedisDeadLetters } from "./dead_letters.ts";
import { RedisScheduleStore } from "./_schedule.ts";
import type { ScheduleStore } from "../../schedule/store.ts";

export type { KvStreamTransportOptions } from "./_options.ts";

/** Most envelopes per publish script call. */
const PUBLISH_CHUNK = 500;

/** How long close waits for read loops to end once their connections are closed. */
const CLOSE_WAIT_MS = 2_000;

interface Local {
  readonly spec: SubscriptionSpec;
  readonly member: string;
  readonly reader: Reader;
  readonly conn: RedisClient;
}

/**
 * The Redis Streams transport. Create it with {@linkcode kvStreamTransport}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KvStreamTransport } from "@fw/events/kvstore";
 * // the connection opens on first use
 * const t = new KvStreamTransport({ url: "redis://127.0.0.1:6379", keyPrefix: "doc:" });
 * assert.deepEqual(t.capabilities, {
 *   ordering: false,
 *   persistent: true,
 *   external: true,
 *   admission: false,
 *   maxDelay: 365 * 24 * 3600 * 1000,
 * });
 * await t.close();
 * ```
 */
export class KvStreamTransport implements Transport {
  /** `redis`. */
  readonly name: string = "redis";
  /** Unordered, persistent, external, no admission at publish; delays up to 365 days. */
  readonly capabilities: TransportCapabilities = {
    ordering: false,
    persistent: true,
    external: true,
    admission: false,
    maxDelay: REDIS_MAX_DELAY_MS,
  };
  /** Dead letters kept in Redis. */
  readonly deadLetters: RedisDeadLetters;
  readonly #o: ResolvedOptions;
  readonly #where: string;
  readonly #locals = new Set<Local>();
  /** Members of subscriptions that closed, reaped on close() when they hold nothing. */
  readonly #left = new Set<string>();
  readonly #deadlines: Deadlines;
  readonly #batches = new Map<string, { bodies: string[]; done: Promise<void> }>();
  readonly #scheduled: ScheduledMovers;
  #connecting: Promise<RedisConnections> | undefined;
  #main: RedisClient | undefined;
  #heartbeat: TimerHandle | undefined;
  #closed = false;

  /**
   * Checks the options; the connection opens on first use (or {@linkcode KvStreamTransport.connect}).
   *
   * @param options Connection, key prefix, timings and services.
   * @throws {TypeError} Naming the option that is wrong.
   */
  constructor(options: KvStreamTransportOptions) {
    const o = this.#o = resolveOptions(options);
    this.#where = o.url !== undefined ? redactRedisUrl(o.url) : "the given client";
    this.#deadlines = new Deadlines(o.publishTimeout);
    this.#scheduled = new ScheduledMovers({
      prefix: o.prefix,
      clock: o.clock,
      poll: o.retryPoll,
      dedupeWindow: o.dedupeWindow,
      logger: o.logger,
    });
    this.deadLetters = new RedisDeadLetters({
      redis: () => this.#connect().then((c) => c.main),
      prefix: o.prefix,
      limit: o.deadLetterLimit,
      logger: o.logger,
      meter: o.meter,
    });
  }

  /**
   * Opens the connection now (it otherwise opens on first use), so that a wrong address fails
   * start-up.
   *
   * @throws {Error} `kvStreamTransport() cannot connect to Redis at <url>: ...`.
   */
  async connect(): Promise<void> {
    await this.#connect();
  }

  #connect(): Promise<RedisConnections> {
    if (this.#connecting) return this.#connecting;
    const o = this.#o;
    const source = o.url !== undefined ? { url: o.url } : { client: o.client };
    const opening = openRedis(OWNER, source).then((c) => {
      this.#main = c.main;
      return c;
    });
    this.#connecting = opening;
    opening.catch(() => {
      if (this.#connecting === opening) this.#connecting = undefined;
    });
    return opening;
  }

  /**
   * Appends the envelope to its topic's stream, unless the topic has no stream yet (no group ever
   * subscribed) or its `dedupeKey` was seen within the window. Publishes made in the same turn of
   * the event loop are sent together (one script call per topic). With `options.deliverAt` in the
   * future the envelope waits in the topic's scheduled set until then.
   *
   * @throws {Error} When the transport is closed, Redis refuses the command, or no reply came
   *   within `publishTimeoutMs` (Redis unreachable).
   */
  publish(envelope: Envelope, options?: TransportPublishOptions): Promise<void> {
    if (this.#closed) {
      return Promise.reject(
        new Error(`Cannot publish to topic "${envelope.topic}": the transport is closed`),
      );
    }
    const main = this.#main;
    const topic = envelope.topic;
    if (!main) {
      // The first publish opens the connection; the bound counts from the call.
      return this.#bounded(topic, this.#connect()).then(() => this.publish(envelope, options));
    }
    const at = options?.deliverAt;
    const part = this.#partOf(envelope);
    if (at !== undefined && at > this.#o.clock.now()) {
      const run = this.#scheduled.publish(main, envelope, at, part).then(() =>
        this.#replicated(main, part)
      );
      return this.#bounded(topic, run);
    }
    const k = envelope.dedupeKey;
    if (typeof k === "string") {
      const p = this.#o.prefix;
      const run = PUBLISH.run(main, [keys.stream(p, part), keys.dedupe(p, part, k)], [
        JSON.stringify(envelope),
        String(this.#o.dedupeWindow),
        "s",
      ]).then(() => this.#replicated(main, part));
      return this.#bounded(topic, run);
    }
    // Publishes of one topic (partition) in the same turn of the event loop go out as one call.
    let batch = this.#batches.get(part);
    if (!batch) {
      const bodies: string[] = [];
      const done = Promise.resolve().then(() => {
        this.#batches.delete(part);
        return this.#flush(main, part, bodies);
      });
      batch = { bodies, done: this.#bounded(topic, done) };
      this.#batches.set(part, batch);
    }
    batch.bodies.push(JSON.stringify(envelope));
    return batch.done;
  }

  /**
   * The partition whose keys take `envelope`: that of its `key`, else of its `dedupeKey` (so a
   * repeat meets its dedupe marker), else the next in turn. The topic itself with one partition.
   */
  #partOf(envelope: Envelope): string {
    const topic = envelope.topic;
    const n = this.#o.partitionsOf(topic);
    if (n === 1) return topic;
    const by = envelope.key ?? envelope.dedupeKey;
    const i = typeof by === "string" ? hashKey(by) % n : (this.#turn = (this.#turn + 1) % n);
    return partName(topic, i);
  }
  #turn = 0;

  /** The names whose keys hold `topic`'s partitions. */
  #parts(topic: string): string[] {
    return Array.from({ length: this.#o.partitionsOf(topic) }, (_, i) => partName(topic, i));
  }

  async #flush(main: RedisClient, topic: string, bodies: string[]): Promise<void> {
    const stream = keys.stream(this.#o.prefix, topic);
    for (let i = 0; i < bodies.length; i += PUBLISH_CHUNK) {
      await PUBLISH_MANY.run(main, [stream], bodies.slice(i, i + PUBLISH_CHUNK));
    }
    await this.#replicated(main, topic);
  }

  /**
   * With `waitForReplicas`, waits (`WAIT`, on the connection that wrote, the topic's master on a
   * cluster) until that many replicas have this connection's writes.
   *
   * @throws {Error} When fewer replicas confirmed within `waitForReplicasMs`.
   */
  async #replicated(main: RedisClient, topic: string): Promise<void> {
    const o = this.#o;
    if (o.waitReplicas === 0) return;
    const acked = Number(
      await sendCommandAt(main, keys.stream(o.prefix, topic), [
        "WAIT",
        String(o.waitReplicas),
        String(o.waitReplicasMs),
      ]),
    );
    if (acked < o.waitReplicas) {
      throw new Error(
        `only ${acked} of ${o.waitReplicas} replicas confirmed the write within ${o.waitReplicasMs} ms (waitForReplicas); it may be lost if the master fails now, and may be delivered: publish again`,
      );
    }
  }

  /**
   * Names the topic and address in failures; rejects after `publishTimeoutMs` without reply
   * (whatever the connection is doing: down, reconnecting, or just back), or when the transport
   * closes first.
   */
  #bounded(topic: string, run: Promise<unknown>, what = "publish to"): Promise<void> {
    return this.#deadlines.bound(
      run.then(() => {}, (err) => {
        throw new Error(
          `Cannot ${what} topic "${topic}" on Redis at ${this.#where}: ${
            (err as Error)?.message ?? err
          }`,
          { cause: err },
        );
      }),
      () =>
        new Error(
          `Cannot ${what} topic "${topic}": Redis at ${this.#where} did not answer within ${this.#o.publishTimeout} ms (the message may still be added once it reconnects)`,
        ),
      () =>
        new Error(
          `Cannot ${what} topic "${topic}": the transport closed before Redis at ${this.#where} answered`,
        ),
    );
  }

  /**
   * Joins a group: creates its Redis group when new (it receives what is published from then on),
   * registers this instance with a heartbeat and starts its reader on a dedicated connection.
   *
   * @throws {Error} When Redis cannot be reached or the transport is closed.
   */
  async subscribe(spec: SubscriptionSpec, listener: DeliveryListener): Promise<Subscription> {
    if (this.#closed) {
      throw new Error(`Cannot subscribe to topic "${spec.topic}": the transport is closed`);
    }
    const connections = await this.#connect();
    const locals: Local[] = [];
    try {
      for (const part of this.#parts(spec.topic)) {
        locals.push(await this.#subscribePart(connections, { ...spec, topic: part }, listener));
      }
    } catch (err) {
      await Promise.all(locals.map((l) => this.#leave(l)));
      throw new Error(
        `Cannot subscribe to topic "${spec.topic}" on Redis at ${this.#where}: ${
          (err as Error)?.message
        }`,
        { cause: err },
      );
    }
    for (const local of locals) local.reader.start();
    this.#startHeartbeat();
    return { close: () => Promise.all(locals.map((l) => this.#leave(l))).then(() => {}) };
  }

  /** Joins one partition (`spec.topic` is its name): its groups, registry entry and reader. */
  async #subscribePart(
    connections: RedisConnections,
    spec: SubscriptionSpec,
    listener: DeliveryListener,
  ): Promise<Local> {
    const o = this.#o;
    const conn = await connections.dedicated();
    const reader = new Reader({
      spec,
      listener,
      conn,
      main: connections.main,
      prefix: o.prefix,
      clock: o.clock,
      logger: o.logger,
      prefetch: o.prefetch,
      batch: o.batch,
      blockMs: o.blockMs,
      retryPoll: o.retryPoll,
      claimIdle: (spec.timeout ?? 30_000) + o.claimGrace,
    });
    const local: Local = { spec, member: instanceMember(spec), reader, conn };
    try {
      await reader.ensureGroups();
      await beat(connections.main, o.prefix, [local.member], o.clock.now() + o.ttl);
    } catch (err) {
      await closeRedisClient(conn);
      throw err;
    }
    this.#locals.add(local);
    this.#scheduled.watch(connections.main, spec.topic);
    return local;
  }

  async #leave(local: Local): Promise<void> {
    if (!this.#locals.delete(local)) return;
    // Every wait on Redis is bounded: a connection that is down never answers.
    const end = performance.now() + this.#o.publishTimeout;
    const ended = await local.reader.close(end);
    await closeRedisClient(local.conn);
    if (!ended) await settleBy(local.reader.done, performance.now() + CLOSE_WAIT_MS);
    this.#left.add(local.member);
    // Expired now: once it holds nothing, the next reaper removes it (this one on close).
    await settleBy(beat(this.#main!, this.#o.prefix, [local.member], this.#o.clock.now()), end);
  }

  #startHeartbeat(): void {
    if (this.#heartbeat !== undefined || this.#closed) return;
    const o = this.#o;
    this.#heartbeat = o.clock.setTimeout(async () => {
      try {
        await this.#beat();
      } catch (err) {
        if (!this.#closed) {
          o.logger?.warn("redis streams: heartbeat failed", { error: String(err) });
        }
      }
      this.#heartbeat = undefined;
      if (!this.#closed) this.#startHeartbeat();
    }, Math.max(1, Math.floor(o.ttl / 3)));
  }

  /** One heartbeat round: renew, reap the instances that are gone, trim. */
  async #beat(): Promise<void> {
    const o = this.#o;
    const main = this.#main!;
    const now = o.clock.now();
    await beat(main, o.prefix, [...this.#locals].map((l) => l.member), now + o.ttl);
    await reap(main, o.prefix, now, o.logger);
    if (!o.trim) return;
    const topics = new Set([...this.#locals].map((l) => l.spec.topic));
    for (const t of topics) await trimStream(main, keys.stream(o.prefix, t));
  }

  /**
   * Publishes to `<topic>.dlq` when that topic has a group, else keeps the dead letter in Redis.
   *
   * @throws {Error} When Redis refuses the write or does not answer within `publishTimeoutMs`.
   */
  deadLetter(envelope: Envelope): Promise<void> {
    const run = this.#connect().then(async (c) => {
      const part = this.#partOf(envelope);
      const added = await PUBLISH.run(c.main, [keys.stream(this.#o.prefix, part)], [
        JSON.stringify(envelope),
        "",
        "g",
      ]);
      if (Number(added) !== 1) await this.deadLetters.add(envelope, this.#o.clock.now());
    });
    return this.#bounded(envelope.topic, run, "dead-letter to");
  }

  /**
   * Forgets a subscription group: its Redis group on the topic stream, its retry stream and its
   * delayed retries. Entries it had not read stay in the stream for the other groups.
   *
   * @param topic Topic name.
   * @param group Group name (for a broadcast group, each instance's group goes with its instance).
   */
  async dropGroup(topic: string, group: string): Promise<void> {
    const main = (await this.#connect()).main;
    const p = this.#o.prefix;
    const g = redisGroup({ topic, group, distribution: "competing", instanceId: "" });
    for (const part of this.#parts(topic)) {
      await main.sendCommand(["XGROUP", "DESTROY", keys.stream(p, part), g]).catch(() => {});
      await main.sendCommand(["DEL", keys.retries(p, part, g), keys.delayed(p, part, g)]);
    }
  }

  /** Each Redis group's lag, pending entries, retries and oldest age (`XINFO GROUPS`). */
  async inspect(): Promise<QueueStats[]> {
    const { main } = await this.#connect();
    return inspectRedis(main, this.#o.prefix, this.#o.clock.now());
  }

  /**
   * Stops reading, waits for acknowledgements in flight, removes this process's instances (a
   * competing consumer only once it holds nothing) and closes the connections fw opened.
   * Deliveries still unsettled stay pending in Redis and are taken over by another instance of
   * their group; scheduled retries stay in Redis.
   *
   * It finishes in bounded time whatever the connection is doing: when Redis does not answer
   * within `publishTimeoutMs` (down, or reconnecting), it skips the rest of this clean-up (the
   * instances expire and a live process reaps them) and drops the connections; publishes still
   * waiting then reject.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const o = this.#o;
    if (this.#heartbeat !== undefined) o.clock.clearTimeout(this.#heartbeat);
    this.#heartbeat = undefined;
    this.#scheduled.stop();
    const end = performance.now() + o.publishTimeout;
    const locals = [...this.#locals];
    this.#locals.clear();
    const stopped = await Promise.all(locals.map((l) => l.reader.close(end)));
    let answered = stopped.every(Boolean) &&
      await settleBy(Promise.all(locals.map((l) => l.reader.flush(end))), end);
    const connecting = this.#connecting;
    let connections: RedisConnections | undefined;
    if (connecting) {
      const opened = connecting.then((c) => connections = c, () => {});
      // Still opening at the deadline: close it once it is open.
      if (!await settleBy(opened, end)) connecting.then((c) => c.close(), () => {});
    }
    if (connections) {
      const members = [...locals.map((l) => l.member), ...this.#left];
      if (answered && members.length > 0) {
        answered = await settleBy(this.#unregister(connections.main, members), end);
      }
      if (!answered) {
        o.logger?.warn(
          "redis streams: Redis did not answer on close; its instances expire and are reaped later",
          { redis: this.#where, waitedMs: o.publishTimeout },
        );
      }
      await connections.close();
    }
    // A read that waited on a connection that was down has failed with its close.
    await settleBy(
      Promise.all(locals.map((l) => l.reader.done)),
      performance.now() + CLOSE_WAIT_MS,
    );
    this.#deadlines.stop();
  }

  /** Reaps this process's members now (a competing consumer only once it holds nothing). */
  async #unregister(main: RedisClient, members: readonly string[]): Promise<void> {
    const o = this.#o;
    for (const member of members) {
      await reapMember(main, o.prefix, member, Number.MAX_SAFE_INTEGER).catch((err) =>
        o.logger?.warn("redis streams: could not unregister on close", { error: String(err) })
      );
    }
  }

  /** Schedule state in Redis: a key per schedule, `<prefix>:schedule:<name>`. */
  scheduleStore(): ScheduleStore {
    return this.#schedules ??= new RedisScheduleStore(
      () => this.#connect().then((c) => c.main),
      this.#o.prefix,
    );
  }
  #schedules: ScheduleStore | undefined;
}

/**
 * A transport on Redis Streams: persistent, shared by every process on the same Redis and key
 * prefix, at-least-once. Each handler group is a Redis consumer group; retries follow the
 * handler's back-off through a delayed set in Redis; a consumer that dies mid-delivery has its
 * entries taken over by another instance of its group once they have been idle for the handler's
 * `timeout` plus `claimGraceMs`.
 *
 * @param options `url` or `client`, `keyPrefix`, timings and services.
 * @returns The transport (the connection opens on first use).
 * @throws {TypeError} Naming the option that is wrong.
 *
 * @example
 * ```ts ignore
 * import { EventBus, getPublisher, handler, Int, topic } from "@fw/events";
 * import { kvStreamTransport } from "@fw/events/kvstore";
 *
 * const Paid = topic("orders.paid", { total: Int });
 * const bus = new EventBus({
 *   transports: { redis: kvStreamTransport({ url: "redis://127.0.0.1:6379", keyPrefix: "shop:" }) },
 * });
 * await bus.add(handler(Paid).options({ group: "billing" }).handle((m) => console.log(m.payload)));
 * await bus.start();
 * await getPublisher(Paid, { bus })({ total: 42 });
 * ```
 */
export function kvStreamTransport(options: KvStreamTransportOptions): KvStreamTransport {
  return new KvStreamTransport(options);
}

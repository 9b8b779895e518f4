/**
 * `sqlTransport({ url | client, schema })`: a persistent handler transport on PostgreSQL, through
 * the npm `postgres` client (or a compatible one).
 *
 * - A publish is one statement: it inserts one `queue` row per subscription group of the topic
 *   (per live instance of a broadcast group), honours a `dedupeKey`, and sends a `NOTIFY` carrying
 *   only the topic name as a wake-up. With `{ tx }` it runs in the caller's open transaction, so
 *   the message exists, and the wake-up is sent, only if that transaction commits (the outbox).
 *   Plain publishes (no `tx`, `dedupeKey` or `deliverAt`) made while `poolSize` statements are in
 *   flight wait and go together in the next statement, one commit for all (`_publishes.ts`); each
 *   still resolves after its rows commit and fails on its own.
 * - Consumers `LISTEN` on one dedicated connection per transport, claim rows in batches with
 *   `FOR UPDATE SKIP LOCKED` (`_claims.ts`), and also poll on a slow timer; after the listening
 *   connection comes back they look again, so nothing published meanwhile waits for the poll.
 * - Claims have a visibility deadline that live consumers extend; a dead consumer's claims expire
 *   and are taken over. Retries move `available_at` by the consumer's back-off.
 * - Subscriber instances are registered with a heartbeat; expired ones are reaped with the
 *   broadcast rows addressed to them. Dead letters with no `<topic>.dlq` group go to a table.
 *
 * @module
 */

import type { TimerHandle } from "@fw/runtime";
import type { Envelope } from "../../envelope.ts";
import type {
  DeadLetterStore,
  DeliveryListener,
  QueueStats,
  Subscription,
  SubscriptionSpec,
  Transport,
  TransportCapabilities,
  TransportPublishOptions,
} from "../../transport.ts";
import type { SqlConnection, SqlQueryable } from "../../_postgres.ts";
import {
  type ResolvedSqlOptions,
  resolveSqlOptions,
  type SqlTransportOptions,
} from "./_options.ts";
import { type SqlNames, sqlNames } from "./_schema.ts";
import { inspectSql } from "./_inspect.ts";
import { SqlConnections } from "./_connections.ts";
import { heartbeat } from "./_registry.ts";
import { type SqlQueries, sqlQueries } from "./_queries.ts";
import { AckBatcher, type ClaimContext, ClaimLoop, withDeadline } from "./_claims.ts";
import { SqlDeadLetters } from "./dead_letters.ts";
import { WakeNotifier } from "./_wake.ts";
import { PublishBatcher } from "./_publishes.ts";
import { SqlScheduleStore } from "./_schedule.ts";
import type { ScheduleStore } from "../../schedule/store.ts";
import { delayedWake, nextDueSql, parseWake, SQL_MAX_DELAY_MS, wakeAtNextDue } from "./_delayed.ts";

export type { SqlTransportOptions } from "./_options.ts";

const OWNER = "sqlTransport()";
/** Longest topic name sent as the wake-up payload (a longer one wakes every subscription). */
const WAKE_TOPIC_MAX = 200;

function isQueryable(tx: unknown): tx is SqlQueryable {
  return typeof (tx as SqlQueryable | null)?.unsafe === "function";
}

/**
 * The PostgreSQL transport. Create it with {@linkcode sqlTransport}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SqlTransport } from "@fw/events/sql";
 * const t = new SqlTransport({ url: "postgres://app@db.internal/app", schema: "app_events" });
 * assert.equal(t.capabilities.persistent, true);
 * assert.equal(t.capabilities.transactional, true);
 * await t.close(); // it never connected: connections open on first use
 * ```
 */
export class SqlTransport implements Transport {
  /** `sql`. */
  readonly name: string = "sql";
  /** Persistent, external, transactional publish; unordered, no admission at publish. */
  readonly capabilities: TransportCapabilities = {
    ordering: false,
    persistent: true,
    external: true,
    admission: false,
    transactional: true,
    maxDelay: SQL_MAX_DELAY_MS,
  };
  /** Dead letters kept in the `dead_letters` table (bounded per topic). */
  readonly deadLetters: DeadLetterStore;
  readonly #dead: SqlDeadLetters;
  readonly #o: ResolvedSqlOptions;
  readonly #names: SqlNames;
  readonly #queries: SqlQueries;
  readonly #owner = crypto.randomUUID();
  readonly #loops = new Set<ClaimLoop>();
  readonly #timers = new Set<TimerHandle>();
  readonly #conns: SqlConnections;
  #context: ClaimContext | undefined;
  #wakeups: WakeNotifier | undefined;
  #publishes: PublishBatcher | undefined;
  #listening: Promise<{ unlisten(): Promise<void> } | undefined> | undefined;
  #closed = false;

  /**
   * Checks the options; the connection opens (and the schema is migrated) on first use.
   *
   * @param options Connection, schema, timings and services.
   * @throws {TypeError} For a missing or doubled `url`/`client`, a bad `schema` or number.
   */
  constructor(options: SqlTransportOptions) {
    this.#o = resolveSqlOptions(options);
    this.#names = sqlNames(this.#o.schema);
    this.#queries = sqlQueries(this.#names);
    this.#conns = new SqlConnections(this.#o);
    this.deadLetters = this.#dead = new SqlDeadLetters({
      sql: async () => (await this.#conns.main()).sql,
      names: this.#names,
      limit: this.#o.deadLetterLimit,
      logger: this.#o.logger,
      meter: this.#o.meter,
    });
  }

  /** The schema holding the tables. */
  get schema(): string {
    return this.#o.schema;
  }

  /**
   * Creates the schema and tables if they do not exist (idempotent; safe to run from several
   * processes at once). Runs on first use unless the `migrate` option is `false`.
   *
   * @throws {Error} When the database cannot be reached or refuses the DDL.
   */
  migrate(): Promise<void> {
    return this.#conns.migrate();
  }

  /**
   * Publishes the envelope to every subscription group of its topic. A repeated `dedupeKey`
   * within the window is dropped. With `options.tx` (a transaction of the same database, such as
   * the `tx` of postgres.js `sql.begin`), the rows are written in that transaction.
   *
   * @param envelope The envelope.
   * @param options `tx`: an open transaction to write in; `deliverAt`: the rows become
   *   claimable then (their `available_at`), and the wake-up names that time.
   * @throws {Error} When the transport is closed or the database refuses the write.
   */
  async publish(envelope: Envelope, options?: TransportPublishOptions): Promise<void> {
    if (this.#closed) {
      throw new Error(`Cannot publish to topic "${envelope?.topic}": the transport is closed`);
    }
    const topic = envelope?.topic;
    if (typeof topic !== "string" || topic === "") {
      throw new TypeError('Cannot publish: envelope field "topic" must be a non-empty string');
    }
    const tx = options?.tx;
    if (tx !== undefined && !isQueryable(tx)) {
      throw new TypeError(
        `Invalid publish option "tx" for topic "${topic}": expected a transaction of the PostgreSQL client (the tx of sql.begin)`,
      );
    }
    const conn = await this.#conns.main();
    const body = JSON.stringify(envelope);
    const dedupe = envelope.dedupeKey;
    const q = this.#queries;
    const at = options?.deliverAt;
    const later = at !== undefined && at > this.#o.clock.now();
    let wake = topic.length <= WAKE_TOPIC_MAX ? topic : "";
    if (later) wake = delayedWake(wake, at);
    const deduped = typeof dedupe === "string";
    try {
      if (tx !== undefined) {
        // In the caller's transaction: the NOTIFY is sent when (and only if) it commits.
        const params: unknown[] = [topic, body, this.#names.channel, wake];
        if (deduped) params.push(dedupe, this.#o.dedupeWindow);
        if (later) params.push(at);
        const text = later
          ? (deduped ? q.publishAtDedupeTx : q.publishAtTx)
          : (deduped ? q.publishDedupeTx : q.publishTx);
        await tx.unsafe(text, params, { prepare: true });
        return;
      }
      if (!deduped && !later) {
        // Coalesced with other plain publishes while the pool is busy (`_publishes.ts`).
        const publishes = this.#publishes ??= new PublishBatcher(conn.sql, q, this.#o.poolSize);
        if (await publishes.publish(topic, body)) this.#notifier(conn).wake(wake);
        return;
      }
      const params: unknown[] = [topic, body];
      if (deduped) params.push(dedupe, this.#o.dedupeWindow);
      if (later) params.push(at);
      const text = later
        ? (deduped ? q.publishAtDedupe : q.publishAt)
        : (deduped ? q.publishDedupe : q.publish);
      const rows = await conn.sql.unsafe(text, params, { prepare: true });
      if (rows.length > 0) this.#notifier(conn).wake(wake);
    } catch (err) {
      throw new Error(
        `Cannot publish to topic "${topic}" on PostgreSQL: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  /**
   * Joins a group: registers it (durably: a competing group's messages wait for its next
   * instance), registers this instance with a heartbeat, starts listening and claims at once.
   *
   * @throws {Error} When the group exists with the other distribution (see
   *   {@linkcode SqlTransport.dropGroup}), the transport is closed or the database unreachable.
   */
  async subscribe(spec: SubscriptionSpec, listener: DeliveryListener): Promise<Subscription> {
    if (this.#closed) {
      throw new Error(`Cannot subscribe to topic "${spec.topic}": the transport is closed`);
    }
    const conn = await this.#conns.main();
    const q = this.#queries;
    let existing: unknown;
    for (let i = 0; i < 5 && existing === undefined; i++) {
      // Empty when another process inserted the group concurrently (not in this snapshot yet).
      const rows = await conn.sql.unsafe(q.joinGroup, [spec.topic, spec.group, spec.distribution]);
      existing = rows[0]?.distribution;
    }
    if (existing !== spec.distribution) {
      throw new Error(
        `Cannot join group "${spec.group}" of topic "${spec.topic}" as ${spec.distribution}: it is ${existing} in PostgreSQL (dropGroup() removes it)`,
      );
    }
    await conn.sql.unsafe(q.beat, [
      [spec.topic],
      [spec.group],
      [spec.instanceId],
      this.#owner,
      this.#o.ttl,
    ]);
    const loop = new ClaimLoop(spec, listener, this.#claimContext(await this.#conns.consumer()));
    this.#loops.add(loop);
    await this.#listen(conn);
    this.#startTimers();
    loop.wake();
    // Delayed rows already stored: look again when the first falls due.
    const o = this.#o;
    wakeAtNextDue(conn.sql, nextDueSql(this.#names), [loop], o.clock, o.pollEvery).catch(
      (error) => o.logger?.warn("sql transport: looking for delayed messages failed", { error }),
    );
    return { close: () => this.#leave(loop) };
  }

  #notifier(conn: SqlConnection): WakeNotifier {
    return this.#wakeups ??= new WakeNotifier(conn.sql, this.#names.channel, this.#o.logger);
  }

  #claimContext(conn: SqlConnection): ClaimContext {
    const o = this.#o;
    return this.#context ??= {
      sql: conn.sql,
      queries: this.#queries,
      owner: this.#owner,
      visibility: o.visibility,
      batchSize: o.batchSize,
      clock: o.clock,
      acks: new AckBatcher(conn.sql, this.#queries.ack, Math.max(o.visibility, 2000)),
      logger: o.logger,
    };
  }

  #listen(conn: SqlConnection): Promise<unknown> {
    return this.#listening ??= Promise.resolve(
      conn.sql.listen(
        this.#names.channel,
        (topic) => this.#wake(topic),
        () => this.#wake(""), // first LISTEN, and again after a reconnect: catch up
      ),
    ).catch((err) => {
      this.#listening = undefined;
      throw new Error(`${OWNER} cannot LISTEN at ${conn.where}: ${(err as Error).message}`, {
        cause: err,
      });
    });
  }

  #wake(payload: string): void {
    const { topic, at } = parseWake(payload);
    const now = this.#o.clock.now();
    for (const loop of this.#loops) {
      if (topic !== "" && loop.spec.topic !== topic) continue;
      if (at === undefined) loop.wake();
      else loop.wakeIn(at - now);
    }
  }

  async #leave(loop: ClaimLoop): Promise<void> {
    if (!this.#loops.delete(loop)) return;
    await loop.close();
    if (this.#closed) return;
    const s = loop.spec;
    const conn = await this.#conns.main();
    await conn.sql.unsafe(this.#queries.leave, [s.topic, s.group, s.instanceId]).then(
      () => {},
      (err) => this.#o.logger?.warn("sql transport: could not unregister", { error: err }),
    );
  }

  /** Polling, heartbeats, claim extension and reaping. */
  #startTimers(): void {
    if (this.#timers.size > 0) return;
    const o = this.#o;
    const nextDue = nextDueSql(this.#names);
    this.#every(o.pollEvery, async () => {
      this.#wake("");
      const conn = await this.#conns.consumer();
      await wakeAtNextDue(conn.sql, nextDue, this.#loops, o.clock, o.pollEvery);
    });
    this.#every(Math.max(50, Math.floor(Math.min(o.ttl, o.visibility) / 3)), () => this.#beat());
  }

  async #beat(): Promise<void> {
    const conn = await this.#conns.consumer();
    const o = this.#o;
    await heartbeat({
      sql: conn.sql,
      queries: this.#queries,
      owner: this.#owner,
      ttl: o.ttl,
      visibility: o.visibility,
      logger: o.logger,
    }, [...this.#loops]);
  }

  #every(ms: number, fn: () => Promise<void>): void {
    const clock = this.#o.clock;
    let handle: TimerHandle;
    const tick = () => {
      this.#timers.delete(handle);
      withDeadline(fn(), Math.max(this.#o.visibility, 2000), "a background task").catch((err) => {
        if (!this.#closed) {
          this.#o.logger?.warn("sql transport: background task failed", { error: err });
        }
      }).finally(() => {
        if (this.#closed) return;
        handle = clock.setTimeout(tick, ms);
        this.#timers.add(handle);
      });
    };
    handle = clock.setTimeout(tick, ms);
    this.#timers.add(handle);
  }

  /** Publishes to `<topic>.dlq` when it has a group, else keeps the dead letter in the table. */
  async deadLetter(envelope: Envelope): Promise<void> {
    const conn = await this.#conns.main();
    const groups = await conn.sql.unsafe(this.#queries.hasGroup, [envelope.topic], {
      prepare: true,
    });
    if (groups.length > 0) return await this.publish(envelope);
    await this.#dead.add(envelope);
  }

  /**
   * Forgets a subscription group: its registration, instances and pending messages.
   *
   * @param topic Topic name.
   * @param group Group name.
   */
  async dropGroup(topic: string, group: string): Promise<void> {
    const conn = await this.#conns.main();
    await conn.sql.unsafe(this.#queries.dropGroup, [topic, group]);
  }

  /** Each group's ready, claimed and retrying rows and oldest age (one query). */
  async inspect(): Promise<QueueStats[]> {
    return inspectSql((await this.#conns.main()).sql, this.#names);
  }

  /**
   * Stops claiming, polling and heartbeats; hands the claims of unfinished deliveries back (another
   * consumer takes them at once), unregisters this process's instances and, when the transport
   * created the client, closes it. Pending retries and unclaimed messages stay in the database.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    const loops = [...this.#loops];
    this.#loops.clear();
    for (const t of this.#timers) this.#o.clock.clearTimeout(t);
    this.#timers.clear();
    await Promise.all(loops.map((l) => l.close()));
    this.#closed = true;
    const { main: conn, consumer } = await this.#conns.shut();
    if (!conn) return;
    const q = this.#queries;
    try {
      await this.#publishes?.drain();
      await this.#context?.acks.drain();
      await this.#wakeups?.drain();
      const held = loops.flatMap((l) => l.inflight());
      if (held.length > 0) {
        await (consumer ?? conn).sql.unsafe(q.release, [held, 0, this.#owner]);
      }
      for (const l of loops) {
        await conn.sql.unsafe(q.leave, [l.spec.topic, l.spec.group, l.spec.instanceId]);
      }
      const listening = await this.#listening?.catch(() => undefined);
      await listening?.unlisten();
    } catch (err) {
      this.#o.logger?.warn("sql transport: could not unregister on close", { error: err });
    }
    await consumer?.close();
    await conn.close();
  }

  /** Schedule state in PostgreSQL: a row per schedule in `<schema>.schedules`. */
  scheduleStore(): ScheduleStore {
    return this.#schedules ??= new SqlScheduleStore(
      async () => (await this.#conns.main()).sql,
      this.#names.schema,
    );
  }
  #schedules: ScheduleStore | undefined;
}

/**
 * A transport on PostgreSQL: messages are rows in the transport's schema, claimed with
 * `FOR UPDATE SKIP LOCKED`, woken by `LISTEN`/`NOTIFY`, and publishable inside your own
 * transaction (`publish(payload, { tx })`), so a message exists only if your write commits.
 *
 * @param options `url` or `client`, `schema`, timings and services.
 * @returns The transport (connections open on first use; the first failure names host and
 *   database).
 * @throws {TypeError} For invalid options.
 *
 * @example
 * ```ts ignore
 * import postgres from "postgres";
 * import { EventBus, getPublisher, handler, Int, topic } from "@fw/events";
 * import { sqlTransport } from "@fw/events/sql";
 *
 * const sql = postgres("postgres://app@127.0.0.1/app");
 * const Order = topic("orders.created", { id: Int });
 * const bus = new EventBus({ transports: { pg: sqlTransport({ client: sql }) } });
 * await bus.add(handler(Order).options({ group: "mailer" }).handle((m) => console.log(m.payload)));
 * await bus.start();
 * const publish = getPublisher(Order, { bus });
 * await sql.begin(async (tx) => {
 *   await tx`INSERT INTO orders (id) VALUES (${42})`;
 *   await publish({ id: 42 }, { tx }); // delivered only if the INSERT commits
 * });
 * ```
 */
export function sqlTransport(options: SqlTransportOptions): SqlTransport {
  return new SqlTransport(options);
}

/**
 * Internal to the SQL transport: checks {@linkcode SqlTransportOptions} at construction (a mistake
 * throws naming the option) and fills in the defaults.
 *
 * @module
 */

import { type Clock, type Logger, type Meter, systemClock } from "@fw/runtime";
import { checkSqlSource, sqlIdentifier, type SqlSource } from "../../_postgres.ts";

/** Options of `sqlTransport`. */
export interface SqlTransportOptions extends SqlSource {
  /**
   * The PostgreSQL schema that holds fw's tables (default `"fw_events"`): letters, digits and `_`,
   * at most 48 characters. Apps or tests sharing one database use different schemas to stay apart.
   */
  schema?: string;
  /**
   * Create the schema and tables (idempotently) on first use (default `true`). With `false`, run
   * {@linkcode SqlTransport.migrate} yourself, for example in a deploy step.
   */
  migrate?: boolean;
  /**
   * How long a claimed delivery stays invisible to other consumers, in ms (default 30000). A live
   * consumer extends its claims while its handlers run; a claim of a consumer that died expires
   * after this long and another consumer takes the message over.
   */
  visibilityTimeoutMs?: number;
  /** A subscriber instance counts as live this long after its last heartbeat, in ms (default 30000). */
  instanceTtlMs?: number;
  /**
   * How often each consumer looks for ready messages without a wake-up, in ms (default 2000): for
   * retries scheduled by other processes, claims that expired, and wake-ups lost while the
   * listening connection was down.
   */
  pollIntervalMs?: number;
  /** Most deliveries one subscriber instance holds unsettled, claimed in batches (default 100). */
  batchSize?: number;
  /** Dead letters kept per topic with no `<topic>.dlq` subscriber (default 1000). */
  deadLetterLimit?: number;
  /** How long a `dedupeKey` suppresses repeats, in ms (default 600000). */
  dedupeWindowMs?: number;
  /** Pool size of the client fw creates from `url` for publishing (default 10). */
  poolSize?: number;
  /**
   * Size of the second pool fw creates from `url` for claims, acks and heartbeats, once something
   * subscribes (default 3), so publishing bursts cannot hold consumers back.
   */
  consumerPoolSize?: number;
  /** `application_name` of the connections fw creates from `url` (default `"fw-events"`). */
  applicationName?: string;
  /** Clock for heartbeats, polling and local wake-up timers (default the system clock). */
  clock?: Clock;
  /** Logger for failures, take-overs and evictions. */
  logger?: Logger;
  /** Meter for `events.dlq.evicted`. */
  meter?: Meter;
}

/** The options with defaults applied. */
export interface ResolvedSqlOptions {
  readonly source: SqlSource;
  readonly schema: string;
  readonly migrate: boolean;
  readonly visibility: number;
  readonly ttl: number;
  readonly pollEvery: number;
  readonly batchSize: number;
  readonly deadLetterLimit: number;
  readonly dedupeWindow: number;
  readonly poolSize: number;
  readonly consumerPoolSize: number;
  readonly applicationName: string;
  readonly clock: Clock;
  readonly logger?: Logger;
  readonly meter?: Meter;
}

const OWNER = "sqlTransport()";

function integer(name: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) {
    throw new TypeError(`Invalid ${OWNER} option "${name}" ${v}: expected an integer >= ${min}`);
  }
  return v;
}

/**
 * Checks the options and applies the defaults.
 *
 * @param options As given.
 * @returns The resolved options.
 * @throws {TypeError} Naming the option that is wrong.
 */
export function resolveSqlOptions(options: SqlTransportOptions): ResolvedSqlOptions {
  const source: SqlSource = { url: options?.url, client: options?.client };
  checkSqlSource(OWNER, source);
  const applicationName = options.applicationName ?? "fw-events";
  if (typeof applicationName !== "string" || applicationName.length > 63) {
    throw new TypeError(
      `Invalid ${OWNER} option "applicationName": expected a string of at most 63 characters`,
    );
  }
  return {
    source,
    schema: sqlIdentifier(OWNER, "schema", options.schema ?? "fw_events"),
    migrate: options.migrate ?? true,
    visibility: integer("visibilityTimeoutMs", options.visibilityTimeoutMs, 30_000, 100),
    ttl: integer("instanceTtlMs", options.instanceTtlMs, 30_000, 100),
    pollEvery: integer("pollIntervalMs", options.pollIntervalMs, 2_000, 10),
    batchSize: integer("batchSize", options.batchSize, 100),
    deadLetterLimit: integer("deadLetterLimit", options.deadLetterLimit, 1000),
    dedupeWindow: integer("dedupeWindowMs", options.dedupeWindowMs, 600_000),
    poolSize: integer("poolSize", options.poolSize, 10),
    consumerPoolSize: integer("consumerPoolSize", options.consumerPoolSize, 3),
    applicationName,
    clock: options.clock ?? systemClock,
    logger: options.logger,
    meter: options.meter,
  };
}

/**
 * Internal to the Deno KV transport: checks {@linkcode DenoKvTransportOptions} at construction
 * (a mistake throws naming the option) and fills in the defaults.
 *
 * @module
 */

import { type Clock, type Logger, type Meter, systemClock } from "@fw/runtime";
import { keys } from "./_keys.ts";
import type { EnqueueOptionsFn } from "./_registry.ts";

/** Options of `denoKvTransport`. */
export interface DenoKvTransportOptions {
  /**
   * Database file (`":memory:"` for a throw-away one). Omitted with no `kv`: the default database,
   * which on Deno Deploy is the project's managed KV.
   */
  path?: string;
  /**
   * A database handle you opened. The transport adds its queue listener to it and leaves it open
   * on `close()`; queue values that fw did not send go to `foreignMessage`.
   */
  kv?: Deno.Kv;
  /** First part of every key and queue message (namespace; default `"fw"`). */
  keyPrefix?: string;
  /** An instance counts as live this long after its last heartbeat, in ms (default 30000). */
  instanceTtlMs?: number;
  /**
   * How often a listening transport picks up the messages other processes handed to it and, on a
   * database file, makes the local queue look for messages they enqueued, in ms (default 1000).
   */
  pollIntervalMs?: number;
  /** Deno KV's own redelivery delays after a process dies mid-delivery (at most 5 entries). */
  backoffSchedule?: readonly number[];
  /** Dead letters kept with no `<topic>.dlq` subscriber (default 1000). */
  deadLetterLimit?: number;
  /** How long a `dedupeKey` suppresses repeats, in ms (default 600000). */
  dedupeWindowMs?: number;
  /** Receives queue values that no fw transport sent (default: logged and dropped). */
  foreignMessage?: (value: unknown) => void | Promise<void>;
  /** Clock for heartbeats and instance expiry (default the system clock). */
  clock?: Clock;
  /** Logger for hand-offs, evictions and failures. */
  logger?: Logger;
  /** Meter for `events.dlq.evicted`. */
  meter?: Meter;
}

/** The options with defaults applied. */
export interface ResolvedOptions {
  readonly path?: string;
  readonly kv?: Deno.Kv;
  /** A database file this process can reopen (not `:memory:`, not the default database). */
  readonly file: boolean;
  /** Identifies the database among the handles of this process. */
  readonly database: string;
  readonly prefix: string;
  readonly ttl: number;
  readonly pollEvery: number;
  readonly dedupeWindow: number;
  readonly deadLetterLimit?: number;
  readonly enqueueOptions: EnqueueOptionsFn;
  readonly foreignMessage?: (value: unknown) => void | Promise<void>;
  readonly clock: Clock;
  readonly logger?: Logger;
  readonly meter?: Meter;
}

/** Deno KV's longest `enqueue` delay: 30 days (the longest a delayed publish may wait). */
export const DENOKV_MAX_DELAY_MS = 30 * 24 * 3600_000;

let databases = 0;
const handleIds = new WeakMap<Deno.Kv, string>();

function integer(name: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) {
    throw new TypeError(
      `Invalid Deno KV transport option "${name}" ${v}: expected an integer >= ${min}`,
    );
  }
  return v;
}

function databaseId(options: DenoKvTransportOptions): string {
  if (options.kv) {
    let id = handleIds.get(options.kv);
    if (!id) handleIds.set(options.kv, id = `handle:${++databases}`);
    return id;
  }
  if (options.path === undefined) return "default";
  return options.path === ":memory:" ? `memory:${++databases}` : `file:${options.path}`;
}

/**
 * Checks the options and applies the defaults.
 *
 * @param options As given.
 * @returns The resolved options.
 * @throws {TypeError} For both `path` and `kv`, an empty `keyPrefix`, a bad number or schedule.
 * @throws {Error} When Deno KV is not enabled (`--unstable-kv`).
 */
export function resolveOptions(options: DenoKvTransportOptions): ResolvedOptions {
  if (options.path !== undefined && options.kv !== undefined) {
    throw new TypeError('Invalid Deno KV transport options: give "path" or "kv", not both');
  }
  if (options.kv === undefined && typeof Deno.openKv !== "function") {
    throw new Error(
      'Deno KV is not available: run Deno with --unstable-kv or add "unstable": ["kv"] to deno.json',
    );
  }
  const prefix = options.keyPrefix ?? "fw";
  if (typeof prefix !== "string" || prefix === "") {
    throw new TypeError(
      `Invalid Deno KV transport option "keyPrefix" "${prefix}": expected a non-empty string`,
    );
  }
  const schedule = options.backoffSchedule;
  if (
    schedule !== undefined &&
    (schedule.length > 5 || !schedule.every((n) => Number.isInteger(n) && n >= 0))
  ) {
    throw new TypeError(
      `Invalid Deno KV transport option "backoffSchedule" [${schedule}]: expected at most 5 non-negative integers`,
    );
  }
  return {
    path: options.path,
    kv: options.kv,
    file: options.kv === undefined && options.path !== undefined && options.path !== ":memory:",
    database: databaseId(options),
    prefix,
    ttl: integer("instanceTtlMs", options.instanceTtlMs, 30_000, 3),
    pollEvery: integer("pollIntervalMs", options.pollIntervalMs, 1000),
    dedupeWindow: integer("dedupeWindowMs", options.dedupeWindowMs, 600_000),
    deadLetterLimit: options.deadLetterLimit,
    enqueueOptions: (m, delay) => ({
      delay: Math.min(Math.max(0, Math.round(delay)), DENOKV_MAX_DELAY_MS),
      keysIfUndelivered: [keys.undelivered(m.prefix, m.qid)],
      ...(schedule ? { backoffSchedule: [...schedule] } : {}),
    }),
    foreignMessage: options.foreignMessage,
    clock: options.clock ?? systemClock,
    logger: options.logger,
    meter: options.meter,
  };
}

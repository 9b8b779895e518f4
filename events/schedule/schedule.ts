/**
 * `schedule(name)`: declares work that runs on a cron schedule, once per tick across every
 * instance of the application, with retries, a time-out, injected providers and an overlap and
 * catch-up policy.
 *
 * @module
 */

import type { ProviderMap } from "@fw/runtime";
import { checkProviders } from "../_providers.ts";
import type {
  ResolvedScheduleOptions,
  ScheduleBuilder,
  ScheduleDefinition,
  ScheduleOptions,
} from "./schedule_types.ts";

/** Schedule option defaults (`cron` has none: it is required). */
export const SCHEDULE_DEFAULTS: Omit<ResolvedScheduleOptions, "cron"> = Object.freeze({
  timezone: "UTC",
  overlap: "skip",
  catchUp: "none",
  maxRetries: 3,
  maxBackoff: 60_000,
  jitter: 0.1,
  timeout: 600_000,
  lease: 15_000,
});

const KNOWN = new Set([
  "cron",
  "timezone",
  "overlap",
  "catchUp",
  "transport",
  "maxRetries",
  "maxBackoff",
  "jitter",
  "timeout",
  "lease",
]);

/** Names are keys in engines and parts of metric names: letters, digits, `.`, `_`, `-`. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

type Draft = { -readonly [K in keyof ResolvedScheduleOptions]?: ResolvedScheduleOptions[K] };

/** Whether the runtime knows an IANA time zone name. */
function isTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

function fail(name: string, option: string, expected: string, got: unknown): never {
  throw new TypeError(
    `Invalid schedule option "${option}" for schedule "${name}": expected ${expected}, got ${
      JSON.stringify(got) ?? String(got)
    }`,
  );
}

function oneOf(name: string, o: ScheduleOptions, key: "overlap" | "catchUp", values: string[]) {
  const v = o[key];
  if (v !== undefined && !values.includes(v)) {
    fail(name, key, values.map((x) => `"${x}"`).join(" or "), v);
  }
}

function checkOptions(name: string, o: ScheduleOptions, current: Draft): Draft {
  if (typeof o !== "object" || o === null) fail(name, "options", "an object", o);
  for (const key of Object.keys(o)) {
    if (!KNOWN.has(key)) {
      throw new TypeError(
        `Unknown schedule option "${key}" for schedule "${name}": use ${[...KNOWN].join(", ")}`,
      );
    }
  }
  const int = (k: "maxRetries" | "maxBackoff" | "timeout" | "lease", min: number) => {
    const v = o[k];
    if (v !== undefined && (!Number.isInteger(v) || v < min)) {
      fail(name, k, `an integer >= ${min}`, v);
    }
  };
  int("maxRetries", 0);
  int("maxBackoff", 0);
  int("timeout", 1);
  int("lease", 1000);
  oneOf(name, o, "overlap", ["skip", "allow"]);
  oneOf(name, o, "catchUp", ["none", "latest"]);
  if (
    o.jitter !== undefined && (typeof o.jitter !== "number" || !(o.jitter >= 0 && o.jitter <= 1))
  ) {
    fail(name, "jitter", "a number from 0 to 1", o.jitter);
  }
  if (o.transport !== undefined && (typeof o.transport !== "string" || !o.transport)) {
    fail(name, "transport", "a transport name", o.transport);
  }
  if (o.timezone !== undefined && (typeof o.timezone !== "string" || !isTimeZone(o.timezone))) {
    fail(name, "timezone", 'an IANA time zone name such as "Europe/Berlin"', o.timezone);
  }
  if (o.cron !== undefined && typeof o.cron !== "string") {
    fail(name, "cron", "a cron expression string", o.cron);
  }
  const next = { ...current, ...o } as Draft;
  if (next.cron !== undefined) {
    const fields = next.cron.trim().split(/\s+/).length;
    if (!(next.cron.trim().startsWith("@") ? fields === 1 : fields === 5 || fields === 6)) {
      fail(
        name,
        "cron",
        '5 fields, or 6 with seconds first (or a nickname such as "@daily")',
        next.cron,
      );
    }
  }
  return next;
}

interface State {
  name: string;
  options: Draft;
  inject?: ProviderMap;
}

class Builder {
  readonly #s: State;
  constructor(state: State) {
    this.#s = state;
  }
  options(options: ScheduleOptions): Builder {
    const checked = checkOptions(this.#s.name, options, this.#s.options);
    return new Builder({ ...this.#s, options: checked });
  }
  inject(providers: ProviderMap): Builder {
    return new Builder({ ...this.#s, inject: checkProviders(providers) });
  }
  handle(fn: (...args: never[]) => unknown): ScheduleDefinition {
    const s = this.#s;
    if (typeof fn !== "function") {
      throw new TypeError(
        `Invalid .handle() argument for schedule "${s.name}": expected a function`,
      );
    }
    if (s.options.cron === undefined) {
      throw new TypeError(
        `Missing schedule option "cron" for schedule "${s.name}": call .options({ cron: "0 6 * * *" }) before .handle()`,
      );
    }
    const options = Object.freeze({
      ...SCHEDULE_DEFAULTS,
      ...s.options,
    }) as ResolvedScheduleOptions;
    return Object.freeze({
      kind: "schedule" as const,
      name: s.name,
      options,
      fn,
      ...(s.inject ? { inject: s.inject } : {}),
    });
  }
}

/**
 * Starts a schedule definition.
 *
 * A schedule runs its function at every tick of its cron expression, once per tick across all
 * instances of the application that share its transport. Export the finished definition from a
 * `*.on.ts` file (the `events()` plugin discovers it like a handler) or pass it as
 * `events({ schedules: [...] })`.
 *
 * @param name Unique name (letters, digits, `.`, `_`, `-`): the key of its shared state and the
 *   `{name}` of its metrics `events.schedule.{name}.*`.
 * @returns A builder; set `cron` with `.options()`, then finish it with `.handle(fn)`.
 * @throws {TypeError} For an invalid name, and later for invalid options (naming the option).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { schedule } from "@fw/events";
 * const nightly = schedule("reports.nightly")
 *   .options({ cron: "0 6 * * *", timezone: "Europe/Berlin" })
 *   .handle((run) => {
 *     console.log(`report for ${run.scheduledAt.toISOString()}, attempt ${run.attempt}`);
 *   });
 * assert.equal(nightly.options.overlap, "skip");
 * assert.throws(() => schedule("x").options({ cron: "* * *" }), /"cron"/);
 * ```
 */
export function schedule(name: string): ScheduleBuilder<undefined> {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new TypeError(
      `Invalid schedule() name ${
        JSON.stringify(name) ?? String(name)
      }: expected 1 to 200 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  }
  return new Builder({ name, options: {} }) as unknown as ScheduleBuilder<undefined>;
}

/**
 * True when `value` is a schedule definition made by {@linkcode schedule}.
 *
 * @param value Anything (a module export).
 * @returns Whether it is a schedule definition.
 */
export function isScheduleDefinition(value: unknown): value is ScheduleDefinition {
  return typeof value === "object" && value !== null &&
    (value as ScheduleDefinition).kind === "schedule" &&
    typeof (value as ScheduleDefinition).name === "string" &&
    typeof (value as ScheduleDefinition).fn === "function";
}

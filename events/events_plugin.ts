/**
 * `events({...})`: the application plugin. It gathers handlers (discovered `*.on.ts`
 * files and explicit ones), picks transports, starts consumers and makes publishers work.
 *
 * Transport choice, in order:
 * 1. `transport` (one) or `transports` + `routes` + `defaultTransport` (several);
 * 2. else `endpoint` or the `EVENTS_ENDPOINT` variable: the broker of another local process
 *    (`httpBrokerTransport`);
 * 3. else the in-process {@linkcode MemoryBroker}, served as the local broker on
 *    127.0.0.1:4222 (`brokerPort` / `EVENTS_BROKER_PORT`; when the port is taken a warning names
 *    it and the app carries on in-process).
 *
 * Lifecycle: setup checks the options; warmup loads handlers (through `.gen/events.gen.ts` when
 * it matches the disk) and fails when a handler on an external transport has no `group`; start
 * subscribes and serves the local broker; stop drains admitted work, then closes transports. In
 * production on the in-process broker with no schedule, no meter (`telemetry()`, `dashboard()`)
 * and no `needBus()`, where warmup has nothing to check and nothing but the `bus` and `broker`
 * accessors can see the bus before a message exists, the bus, the broker and their modules are
 * made on first use (the first publish or local broker request), so a cold start does not pay for
 * them.
 *
 * @module
 */

import { type AppContext, type LoaderManifest, noopMeter, type Plugin } from "@fw/runtime";
import type { EventBus, StoredDeadLetter } from "./event_bus.ts";
import { handlerIdentity, isHandlerDefinition } from "./handler.ts";
import type { HandlerDefinition } from "./handler_types.ts";
import { isScheduleDefinition } from "./schedule/schedule.ts";
import type { ScheduleDefinition } from "./schedule/schedule_types.ts";
import type { Scheduler } from "./schedule/scheduler.ts";
import { type LocalBroker, serveLocalBroker } from "./transports/http_broker/_local_server.ts";
import type { MemoryBroker } from "./transports/memory_broker.ts";
import { activateLazyBus, busNeeded, type LazyActivation } from "./publisher.ts";
import { createTransportRouter, type RouteRule } from "./routing.ts";
import type { Transport } from "./transport.ts";
import type { Wiring } from "./_wire.ts";
import type { EventServerTransportOptions } from "./transports/eventserver/eventserver.ts";
// The scheduler, the HTTP broker client and the managed Event Server transport load with
// `await import()` when the options call for them (with the unstable `lazy-dynamic-imports`, Deno
// then reads them only then): an app on the in-process broker with no schedule starts without
// them. The local broker's server is small (`_local_server.ts`); its request handling loads on
// its first request. The bus and the in-process broker (`event_bus.ts`,
// `consumer.ts`, `transports/memory_broker.ts` and the modules around them) load the same way: at
// warmup, except in production on the in-process broker, where they load on first use (see
// `warmup` below).

/** Options of {@linkcode events}. */
export interface EventsOptions {
  /** Discover `*.on.ts` files (default true). */
  autoScan?: boolean;
  /** Explicit handlers (with or without `autoScan`). */
  handlers?: readonly HandlerDefinition[];
  /** Explicit schedules (with or without `autoScan`); `*.on.ts` files may export them too. */
  schedules?: readonly ScheduleDefinition[];
  /** Handler folder beside the entry file (default `events`). */
  scanFolder?: string;
  /** Overrides the entry directory (a path or `import.meta.url`). */
  root?: string | URL;
  /** A generated loader to use instead of scanning (`import manifest from "./.gen/events.gen.ts"`). */
  manifest?: LoaderManifest;
  /** Broker endpoint; wins over `EVENTS_ENDPOINT`. */
  endpoint?: string;
  /**
   * One explicit transport, or `"eventserver"`: publish through a managed Event Server configured
   * by `eventServer` (see `eventServerTransport()`).
   */
  transport?: Transport | "eventserver";
  /** Settings of `transport: "eventserver"`: origin, audience, contract version, token source. */
  eventServer?: EventServerTransportOptions;
  /** Named transports. */
  transports?: Readonly<Record<string, Transport>>;
  /** Routing rules over `transports`. */
  routes?: readonly RouteRule[];
  /** Fallback transport name. */
  defaultTransport?: string;
  /** The in-memory broker redelivers about 2% of handled messages. */
  simulateDuplicates?: boolean;
  /** Dead letters the in-memory broker keeps (default 1000). */
  deadLetterLimit?: number;
  /** Local broker port (default `EVENTS_BROKER_PORT`, else 4222; 0 picks one; false serves none). */
  brokerPort?: number | false;
  /** Randomness for retry jitter and duplicates (tests). */
  random?: () => number;
}

/** The plugin, with access to its bus once warmed up. */
export interface EventsPlugin extends Plugin {
  /** The options given. */
  readonly options: EventsOptions;
  /**
   * The bus, after warmup. In production on the in-process broker with no schedule, no meter
   * (`telemetry()`, `dashboard()`) and no `needBus()`, it is made on first use (the first publish
   * or local broker request) and is undefined until then.
   */
  readonly bus: EventBus | undefined;
  /** The schedules' runner (after warmup, when there are schedules). */
  readonly scheduler: Scheduler | undefined;
  /** The in-process broker, when the app uses one (made with the bus). */
  readonly broker: MemoryBroker | undefined;
  /** The local broker server, when serving. */
  readonly localBroker: LocalBroker | undefined;
  /** Dead letters kept by the transports. */
  deadLetters(options?: { topic?: string }): Promise<StoredDeadLetter[]>;
  /** Publishes kept dead letters again on their original topic; returns how many. */
  redrive(ids?: readonly string[]): Promise<number>;
}

/** Checks an array option of definitions, naming the first bad item. */
function checkList(
  list: unknown,
  option: string,
  is: (value: unknown) => boolean,
  expected: string,
): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    throw new TypeError(`Invalid events() option "${option}": expected an array`);
  }
  list.forEach((item, i) => {
    if (!is(item)) {
      throw new TypeError(`Invalid events() option "${option}[${i}]": expected ${expected}`);
    }
  });
}

function checkOptions(o: EventsOptions): void {
  if (typeof o !== "object" || o === null) {
    throw new TypeError("Invalid events() options: expected an object");
  }
  if (o.transport && o.transports) {
    throw new TypeError('Invalid events() options: use "transport" or "transports", not both');
  }
  if ((o.routes?.length || o.defaultTransport) && !o.transports) {
    throw new TypeError(
      'Invalid events() options: "routes" and "defaultTransport" need a "transports" map',
    );
  }
  for (
    const [k, t] of Object.entries(
      o.transports ??
        (o.transport && o.transport !== "eventserver" ? { transport: o.transport } : {}),
    )
  ) {
    if (!t || typeof t.publish !== "function" || typeof t.subscribe !== "function") {
      throw new TypeError(`Invalid events() transport "${k}": expected a transport object`);
    }
  }
  if (o.transports) {
    // Fails now, naming the rule, when a route or the default names an unknown transport.
    createTransportRouter(o.routes ?? [], Object.keys(o.transports), o.defaultTransport);
  }
  checkList(
    o.handlers,
    "handlers",
    isHandlerDefinition,
    "a handler made with handler(Topic).handle()",
  );
  checkList(
    o.schedules,
    "schedules",
    isScheduleDefinition,
    "a schedule made with schedule(name).handle()",
  );
  if (
    o.brokerPort !== undefined && o.brokerPort !== false &&
    !(Number.isInteger(o.brokerPort) && o.brokerPort >= 0 && o.brokerPort <= 65535)
  ) {
    throw new TypeError(
      `Invalid events() option "brokerPort": expected a port number or false, got ${o.brokerPort}`,
    );
  }
}

/** Checks `transport` when it is a name: only `"eventserver"`, with its `eventServer` settings. */
function checkTransportName(o: EventsOptions): void {
  if (typeof o !== "object" || o === null) return;
  if (o.transport === "eventserver") {
    if (typeof o.eventServer !== "object" || o.eventServer === null) {
      throw new TypeError(
        'Invalid events() options: transport "eventserver" needs "eventServer": { origin, audience, contractVersion, tokenSource }',
      );
    }
  } else if (typeof o.transport === "string") {
    throw new TypeError(
      `Invalid events() option "transport": expected a transport object or "eventserver", got "${o.transport}"`,
    );
  }
}

/**
 * The explicit transport: the one given, or the managed one for `transport: "eventserver"` (its
 * module loads here, at start-up, and its settings are checked here).
 */
async function explicitTransport(o: EventsOptions): Promise<Transport | undefined> {
  if (o.transport !== "eventserver") return o.transport;
  const { eventServerTransport } = await import("./transports/eventserver/eventserver.ts");
  return eventServerTransport(o.eventServer!);
}

/**
 * What subscribing the handlers to the in-process broker would refuse (a group joined as both
 * competing and broadcast), with its message: the check the broker makes at start, made at warmup
 * when the broker itself is made on first use.
 */
function checkGroups(found: ReadonlyArray<[string | undefined, HandlerDefinition]>): void {
  const seen = new Map<string, string>();
  for (const [source, def] of found) {
    // the group EventBus.add() gives the handler's consumer (registered as the plugin does)
    const { group } = handlerIdentity(def, def.name ?? source);
    const key = `${def.topic.name}\u0000${group}`;
    const distribution = seen.get(key);
    if (distribution === undefined) seen.set(key, def.options.distribution);
    else if (distribution !== def.options.distribution) {
      throw new Error(
        `Cannot join group "${group}" of topic "${def.topic.name}" as ${def.options.distribution}: it is ${distribution}`,
      );
    }
  }
}

/** Definitions exported by discovered modules: `[file#export, definition]`, sorted. */
function definitionsOf<T>(
  modules: Record<string, Record<string, unknown>>,
  folder: string,
  is: (value: unknown) => value is T,
): Array<[string, T]> {
  const out: Array<[string, T]> = [];
  for (const file of Object.keys(modules).sort()) {
    const mod = modules[file];
    for (const name of Object.keys(mod).sort()) {
      const value = mod[name];
      if (is(value)) out.push([`${folder}/${file}#${name}`, value]);
    }
  }
  return out;
}

/**
 * Creates the events plugin.
 *
 * @param options Handlers, transports and local-broker settings.
 * @returns The plugin for `application().use()`.
 * @throws {TypeError} For invalid options (at once), {@linkcode Error} at start-up for a handler
 *   without a group on an external transport or an unreadable events endpoint.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { application } from "@fw/application";
 * import { events, getPublisher, handler, Int, topic } from "@fw/events";
 *
 * const Ping = topic("demo.ping", { n: Int });
 * const seen: number[] = [];
 * const app = application().use(events({
 *   autoScan: false,
 *   brokerPort: false,
 *   handlers: [handler(Ping).handle((msg) => void seen.push(msg.payload.n))],
 * }));
 * await app.start();
 * await getPublisher(Ping)({ n: 1 });
 * await app.stop();
 * assert.deepEqual(seen, [1]);
 * ```
 */
export function events(options: EventsOptions = {}): EventsPlugin {
  checkTransportName(options);
  checkOptions(options);
  let managed: Transport | undefined; // the "eventserver" transport, made once at first warmup
  // the bus, the broker and the scheduler, set by `_wire.ts` as it makes them
  const made: Wiring = {};
  // the module that made the bus (`_in_process.ts` or `_wire.ts`): its `activate()` starts it
  let wiring: { activate: typeof import("./_wire.ts").activate } | undefined;
  let local: LocalBroker | undefined;
  let deactivate: (() => void) | undefined;
  const folder = options.scanFolder ?? "events";

  // On the in-process broker, with nothing that reads the bus before a message exists (no
  // schedule, no meter, no needBus()), the handlers found at warmup: the bus is made on first use.
  let lazyFound: Array<[string | undefined, HandlerDefinition]> | undefined;
  let building: Promise<void> | undefined;
  let lazy: LazyActivation | undefined;

  /**
   * Makes the bus (and the in-process broker when no transport is given) and adds handlers
   * (`_wire.ts`, loaded here with the bus's modules).
   */
  async function wire(
    ctx: AppContext,
    given: Readonly<Record<string, Transport>> | undefined,
    found: Array<[string | undefined, HandlerDefinition]>,
    timed: Array<[string | undefined, ScheduleDefinition]>,
  ): Promise<void> {
    if (given === undefined) {
      const inProcess = wiring = await import("./_in_process.ts");
      await inProcess.wireInProcess(ctx, options, made, found, timed);
    } else {
      const explicit = wiring = await import("./_wire.ts");
      await explicit.wire(ctx, options, made, given, found, timed);
    }
  }

  /** Serves the in-process broker to other local processes, unless `brokerPort` is false. */
  function serveLocal(
    ctx: AppContext,
    source: MemoryBroker | (() => Promise<MemoryBroker>),
  ): void {
    if (options.brokerPort === false) return;
    const envPort = ctx.env("EVENTS_BROKER_PORT");
    const port = options.brokerPort ?? (envPort !== undefined ? Number(envPort) : 4222);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new TypeError(`Invalid EVENTS_BROKER_PORT "${envPort}": expected a port number`);
    }
    try {
      local = serveLocalBroker(source, { port, logger: ctx.logger });
      ctx.logger.info(`local events broker listening on ${local.url}`);
    } catch (err) {
      if (!(err instanceof Deno.errors.AddrInUse)) throw err;
      ctx.logger.warn(
        `local events broker not started: port ${port} is in use; carrying on in-process (set EVENTS_BROKER_PORT to choose another)`,
      );
    }
  }

  /** Starts the bus and the scheduler and makes publishers use the bus. */
  async function activate(
    ctx: AppContext,
    use?: (bus: EventBus) => () => void,
  ): Promise<void> {
    deactivate = await wiring!.activate(ctx, made, use);
  }

  const plugin: EventsPlugin = {
    name: "events",
    options,
    get bus() {
      return made.bus;
    },
    get scheduler() {
      return made.scheduler;
    },
    get broker() {
      return made.broker;
    },
    get localBroker() {
      return local;
    },
    deadLetters(o) {
      return made.bus ? made.bus.deadLetters(o) : Promise.resolve([]);
    },
    redrive(ids) {
      return made.bus ? made.bus.redrive(ids) : Promise.resolve(0);
    },
    async warmup(ctx: AppContext) {
      let transports: Readonly<Record<string, Transport>> | undefined;
      const explicit = options.transports
        ? undefined
        : (managed ??= await explicitTransport(options));
      if (options.transports) transports = options.transports;
      else if (explicit) transports = { [explicit.name]: explicit };
      else {
        const endpoint = options.endpoint ?? ctx.env("EVENTS_ENDPOINT");
        if (endpoint) {
          const { httpBrokerTransport } = await import("./transports/http_broker/http_broker.ts");
          transports = { local: httpBrokerTransport({ url: endpoint }) };
        }
      }
      for (const t of Object.values(transports ?? {})) {
        // Start-up checks of transports that have one (the managed transport's contract version).
        const ready = (t as { ready?: () => Promise<void> }).ready;
        if (typeof ready === "function") await ready.call(t);
      }
      const found: Array<[string | undefined, HandlerDefinition]> = [];
      const timed: Array<[string | undefined, ScheduleDefinition]> = [];
      if (options.autoScan !== false) {
        let modules = options.manifest?.modules;
        if (!modules) {
          // the loader code loads only to scan (a deployed app passes its generated loader)
          const { loadModules, rootDirOf } = await import("@fw/runtime/loader");
          const root = rootDirOf(options.root) ?? ctx.entryDir;
          const loaded = root
            ? await loadModules(root, folder, "events", (f) => f.endsWith(".on.ts"))
            : undefined;
          if (loaded?.stale) {
            ctx.logger.warn(
              `.gen/events.gen.ts is out of date with ${folder}/: scanned instead; run generate`,
            );
          }
          modules = loaded?.modules ?? {};
        }
        found.push(...definitionsOf(modules, folder, isHandlerDefinition));
        timed.push(...definitionsOf(modules, folder, isScheduleDefinition));
      }
      for (const h of options.handlers ?? []) found.push([undefined, h]);
      for (const s of options.schedules ?? []) timed.push([undefined, s]);
      // On the in-process broker nothing here can fail (no handler needs a group, no transport
      // has start-up checks) and, with no schedule, no meter and no needBus(), nothing but the
      // `bus` and `broker` accessors can tell whether the bus exists before a message does. In
      // production it is then made, with its modules, on first use (a publish, a request to the
      // local broker), not before the first request; development makes it here, as always.
      if (
        ctx.production && transports === undefined && timed.length === 0 &&
        ctx.meter === noopMeter && !busNeeded(ctx.container)
      ) {
        checkGroups(found);
        lazyFound = found;
        return;
      }
      await wire(ctx, transports, found, timed);
    },
    async start(ctx: AppContext) {
      const found = lazyFound;
      if (found === undefined) {
        if (made.broker) serveLocal(ctx, made.broker);
        await activate(ctx);
        return;
      }
      lazyFound = undefined;
      const make = () =>
        building ??= (async () => {
          const registered = lazy!;
          try {
            await wire(ctx, undefined, found, []);
            await activate(ctx, registered.activate);
          } catch (error) {
            registered.undo(error);
            throw error;
          } finally {
            if (lazy === registered) lazy = undefined;
          }
        })();
      lazy = activateLazyBus(make);
      serveLocal(ctx, () => make().then(() => made.broker!));
    },
    async stop() {
      lazy?.undo();
      lazy = undefined;
      await building?.catch(() => {});
      deactivate?.();
      deactivate = undefined;
      await local?.close();
      local = undefined;
      await made.scheduler?.stop();
      await made.bus?.stop();
    },
  };
  return plugin;
}

/**
 * The data of each view, built on demand for the JSON API and the live stream: Overview (routes,
 * topics, handlers, dead-letter counts), Queues (each transport's `inspect()`), Event Server,
 * Schedules and Traces. Internal.
 *
 * @module
 */

import type { Clock, Logger } from "@fw/runtime";
import type { EventBus, QueueStats } from "@fw/events";
import { type DeadLetterSummary, summary } from "./_dead_letters.ts";
import type { RouteFigures, Stats, TopicFigures } from "./_stats.ts";
import type { ScheduleSource, ScheduleView } from "./schedules.ts";
import type { TraceSource, TraceSummary } from "./traces.ts";

/** One handler (consumer) in the Overview. */
export interface HandlerFigures {
  /** Handler name. */
  readonly name: string;
  /** Topic. */
  readonly topic: string;
  /** Group. */
  readonly group: string;
  /** Transport key. */
  readonly transport: string;
  /** Invocations running now. */
  readonly inFlight: number;
  /** Admitted deliveries waiting for a slot. */
  readonly queued: number;
  /** Successful invocations since start. */
  readonly success: number;
  /** Failed invocations since start. */
  readonly failure: number;
  /** Retries scheduled since start. */
  readonly retry: number;
  /** Messages dead-lettered since start. */
  readonly deadLettered: number;
  /** Invocations per second over the window. */
  readonly rate: number;
}

/** The Overview view. */
export interface Overview {
  /** When it was taken (ISO 8601). */
  readonly at: string;
  /** Window length in seconds. */
  readonly windowSeconds: number;
  /** Routes, busiest first. */
  readonly routes: RouteFigures[];
  /** Topics with publishes. */
  readonly topics: TopicFigures[];
  /** Handlers. */
  readonly handlers: HandlerFigures[];
  /** Kept dead letters. */
  readonly deadLetters: DeadLetterSummary;
}

/** One transport in the Queues view. */
export interface TransportQueues {
  /** Key of the transport in the bus. */
  readonly transport: string;
  /** Its kind (`redis`, `denokv`, ...). */
  readonly kind: string;
  /** Whether it can tell its backlog. */
  readonly inspectable: boolean;
  /** Its groups. */
  readonly queues: QueueStats[];
  /** Why it could not answer, when it failed. */
  readonly error?: string;
}

/** What the Event Server view reads (the `eventServer()` plugin has it). */
export interface EventServerSource {
  /** Open connections. */
  readonly connections: number;
  /** Subscriptions per topic and slow-consumer closes, when the server counts them. */
  stats?(): { subscriptions: Record<string, number>; slowConsumerCloses: number };
}

/** The Event Server view. */
export interface EventServerView {
  /** Whether an Event Server is given to the dashboard. */
  readonly mounted: boolean;
  /** Open WebSocket connections and SSE streams. */
  readonly connections?: number;
  /** Subscriptions per topic. */
  readonly subscriptions?: Record<string, number>;
  /** Connections closed for being too slow, since start. */
  readonly slowConsumerCloses?: number;
}

/** What the views are built from. */
export interface ViewSources {
  readonly stats: Stats;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly bus: () => EventBus | undefined;
  readonly skipRoutes: string;
  readonly eventServer?: EventServerSource;
  /** The given source, or the app's scheduler (`available()` says whether it has one). */
  readonly schedules?: ScheduleSource & { available?(): boolean };
  readonly traces?: TraceSource;
}

const NO_DEAD: DeadLetterSummary = { total: 0, byTopic: {} };

/** The Overview now. */
export async function overview(s: ViewSources): Promise<Overview> {
  const now = s.clock.now();
  const bus = s.bus();
  const handlers: HandlerFigures[] = [];
  const seen = new Map<string, number>();
  for (const h of bus?.handlerLoad() ?? []) {
    // the n-th consumer of a topic owns the n-th cells the meter made for that topic
    const n = seen.get(h.topic) ?? 0;
    seen.set(h.topic, n + 1);
    const cells = s.stats.handlers.get(h.topic)?.[n];
    handlers.push({
      name: h.name,
      topic: h.topic,
      group: h.group,
      transport: h.transport,
      inFlight: h.running,
      queued: h.queued,
      success: cells?.success ?? 0,
      failure: cells?.failure ?? 0,
      retry: cells?.retry ?? 0,
      deadLettered: cells?.dlq ?? 0,
      rate: cells ? cells.window.summary(now).rate : 0,
    });
  }
  return {
    at: new Date(now).toISOString(),
    windowSeconds: s.stats.seconds,
    routes: s.stats.routes(now, s.skipRoutes),
    topics: s.stats.topicFigures(now),
    handlers,
    deadLetters: bus ? await summary(bus) : NO_DEAD,
  };
}

/** The Queues view now: every transport, inspected in parallel. */
export async function queues(s: ViewSources): Promise<TransportQueues[]> {
  const bus = s.bus();
  if (!bus) return [];
  return await Promise.all(
    Object.entries(bus.transports).map(async ([key, t]) => {
      const base = { transport: key, kind: t.name, inspectable: typeof t.inspect === "function" };
      if (!t.inspect) return { ...base, queues: [] };
      try {
        return { ...base, queues: await t.inspect() };
      } catch (error) {
        s.logger.warn("dashboard: a transport could not tell its queues", {
          transport: key,
          error: String(error),
        });
        return { ...base, queues: [], error: (error as Error)?.message ?? String(error) };
      }
    }),
  );
}

/** The Event Server view now. */
export function eventServerView(s: ViewSources): EventServerView {
  const es = s.eventServer;
  if (!es) return { mounted: false };
  return { mounted: true, connections: es.connections, ...(es.stats?.() ?? {}) };
}

/** The Schedules view now. */
export async function scheduleView(
  s: ViewSources,
): Promise<{ available: boolean; items: readonly ScheduleView[] }> {
  const source = s.schedules;
  if (!source || (source.available && !source.available())) return { available: false, items: [] };
  return { available: true, items: await s.schedules.schedules() };
}

/** The Traces list now. */
export function traceList(s: ViewSources): { available: boolean; items: TraceSummary[] } {
  if (!s.traces) return { available: false, items: [] };
  return { available: true, items: s.traces.traces() };
}

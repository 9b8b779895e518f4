/**
 * The dashboard's JSON API, as endpoints of the application (so `.secure()`, validation and the
 * error shape are the ones every route has): views, the live stream, and dead letters (list,
 * redrive, discard). Internal.
 *
 * @module
 */

import {
  ArrayOf,
  type EndpointBuilder,
  Int,
  Optional,
  type RawParams,
  type RawQuery,
  Stream,
} from "@fw/application";
import { BadRequestException, type Logger, NotFoundException } from "@fw/runtime";
import type { EventBus } from "@fw/events";
import { discard, listPage, redrive, type Selection } from "./_dead_letters.ts";
import type { Feed } from "./_feed.ts";
import { actor, checkOrigin } from "./_guard.ts";
import {
  eventServerView,
  overview,
  queues,
  scheduleView,
  traceList,
  type ViewSources,
} from "./_views.ts";

/** Most dead letters one page may hold. */
export const MAX_PAGE = 500;
const DEFAULT_PAGE = 50;

/** What the API routes need. */
export interface ApiServices extends ViewSources {
  readonly feed: Feed;
  readonly logger: Logger;
  readonly trustProxy: () => boolean;
}

/** Starts an endpoint with the dashboard's access rule applied. */
export type Start = () => EndpointBuilder<RawParams, RawQuery, unknown, unknown, undefined, never>;

/** One API route before it is compiled. */
export interface ApiRoute {
  readonly method: "GET" | "POST";
  /** Path under the API root, such as `/dead-letters`. */
  readonly path: string;
  // deno-lint-ignore no-explicit-any
  readonly definition: any;
}

function selection(body: { ids?: string[]; topic?: string }): Selection {
  const hasIds = body.ids !== undefined, hasTopic = body.topic !== undefined;
  if (hasIds === hasTopic) {
    throw new BadRequestException('Give either "ids" (an array of message ids) or "topic"');
  }
  if (hasIds && body.ids!.length === 0) throw new BadRequestException('"ids" is empty');
  return hasIds ? { ids: body.ids! } : { topic: body.topic! };
}

function needBus(s: ApiServices): EventBus {
  const bus = s.bus();
  if (!bus) throw new NotFoundException("No events() plugin runs in this application");
  return bus;
}

/** A state-changing dead-letter call: origin check, selection, action, log line. */
function deadLetterAction(
  ep: Start,
  s: ApiServices,
  verb: "redriven" | "discarded",
  act: (bus: EventBus, sel: Selection) => Promise<number>,
) {
  return ep()
    .body({ ids: Optional(ArrayOf(String)), topic: Optional(String) })
    .handle(async (ctx) => {
      checkOrigin(ctx.req, s.trustProxy());
      const sel = selection(await ctx.body());
      const moved = await act(needBus(s), sel);
      s.logger.info(`dashboard: dead letters ${verb}`, {
        user: actor(),
        ...("ids" in sel ? { ids: sel.ids.length } : { topic: sel.topic }),
        moved,
      });
      return { moved };
    });
}

/**
 * The API routes.
 *
 * @param s Services.
 * @param ep Starts each endpoint (with `.secure()` when the dashboard is guarded).
 * @returns The routes, relative to the API root.
 */
export function apiRoutes(s: ApiServices, ep: Start): ApiRoute[] {
  return [
    { method: "GET", path: "/overview", definition: ep().handle(() => overview(s)) },
    {
      method: "GET",
      path: "/queues",
      definition: ep().handle(async () => ({ transports: await queues(s) })),
    },
    {
      method: "GET",
      path: "/event-server",
      definition: ep().handle(() => eventServerView(s)),
    },
    { method: "GET", path: "/schedules", definition: ep().handle(() => scheduleView(s)) },
    { method: "GET", path: "/traces", definition: ep().handle(() => traceList(s)) },
    {
      method: "GET",
      path: "/traces/:traceId",
      definition: ep().params({ traceId: String }).handle((ctx) => {
        const spans = s.traces?.trace(ctx.params.traceId);
        if (!spans) throw new NotFoundException(`Trace "${ctx.params.traceId}" is not kept`);
        return { traceId: ctx.params.traceId, spans };
      }),
    },
    {
      method: "GET",
      path: "/stream",
      definition: ep().returns(Stream(String)).handle((ctx) => s.feed.attach(ctx)),
    },
    {
      method: "GET",
      path: "/dead-letters",
      definition: ep()
        .query({ topic: Optional(String), limit: Optional(Int), cursor: Optional(String) })
        .handle(async (ctx) => {
          const query = ctx.queryParams();
          const limit = query.limit ?? DEFAULT_PAGE;
          if (limit < 1 || limit > MAX_PAGE) {
            throw new BadRequestException(
              `Invalid "limit": expected 1 to ${MAX_PAGE}, got "${limit}"`,
            );
          }
          try {
            return await listPage(needBus(s), {
              limit,
              ...(query.topic !== undefined ? { topic: query.topic } : {}),
              ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
            });
          } catch (error) {
            if (error instanceof RangeError) throw new BadRequestException(error.message);
            throw error;
          }
        }),
    },
    {
      method: "POST",
      path: "/dead-letters/redrive",
      definition: deadLetterAction(ep, s, "redriven", redrive),
    },
    {
      method: "POST",
      path: "/dead-letters/discard",
      definition: deadLetterAction(ep, s, "discarded", discard),
    },
  ];
}

/**
 * The application the typed client is tested against: one route of every shape (params,
 * catch-all, query arrays, bodies, 201/202/204, a redirect, documented and custom errors, a
 * secured and a rate-limited route, an internal error, an SSE stream with ids, a stream that
 * fails, a bidirectional and a client-stream WebSocket). Its route map is `typeof clientRoutes`,
 * the way `api().route()` routes join a client (`RouteEntry` adds single ones).
 *
 * @module
 */

import {
  ArrayOf,
  type AuthUser,
  createLogger,
  HttpException,
  Int,
  MemorySink,
  Min,
  MinLength,
  NotFoundException,
  Optional,
  schema,
  Stream,
  useContext,
} from "@fw/runtime";
import { api } from "../api.ts";
import { type Application, application } from "../application.ts";
import { endpoint } from "../endpoint.ts";
import { http } from "../http.ts";
import { HttpResponse, json } from "../http_response.ts";
import { oauth } from "../policies/oauth.ts";

/** The shared secret of the tokens `/me` accepts. */
export const CLIENT_APP_SECRET = "client-app-test-secret-0123456789abcdef";
/** Issuer and audience of those tokens. */
export const CLIENT_APP_ISSUER = "https://issuer.test";

const Item = schema("Item", { id: Int, name: MinLength(1), price: Min(0), tags: ArrayOf(String) });
const NewItem = { name: MinLength(1), price: Min(0), tags: Optional(ArrayOf(String)) };

function store() {
  const items = new Map([[1, { id: 1, name: "tea", price: 3, tags: ["hot"] }]]);
  let next = 2;
  return { items, id: () => next++ };
}

/** Builds the routes (each app gets its own store). */
function makeClientRoutes() {
  const db = store();
  const find = (id: number) => {
    const item = db.items.get(id);
    if (!item) throw new NotFoundException(`Item ${id} not found`);
    return item;
  };
  return {
    "GET /items/:id": endpoint()
      .params({ id: Int })
      .query({ fields: Optional(ArrayOf(String)) })
      .returns(Item)
      .mayThrow("NotFound")
      .throws(422, "Not shippable", { reason: String, id: Int })
      .handle((ctx) => {
        const item = find(ctx.params.id);
        if (item.tags.includes("fragile")) {
          return json({ reason: "fragile", id: item.id }, { status: 422 });
        }
        return item;
      }),
    "GET /items": endpoint()
      .query({ tags: ArrayOf(String), limit: Optional(Int) })
      .returns({ tags: ArrayOf(String), limit: Optional(Int), count: Int })
      .handle((ctx) => {
        const { tags, limit } = ctx.queryParams();
        const count = [...db.items.values()].filter((i) => tags.every((t) => i.tags.includes(t)))
          .length;
        return { tags, limit, count };
      }),
    "POST /items": endpoint()
      .body(NewItem)
      .returns(201, "Created", Item)
      .response(202, "Queued for review", { queued: Boolean })
      .mayThrow("Conflict")
      .handle(async (ctx) => {
        const body = await ctx.body();
        if ([...db.items.values()].some((i) => i.name === body.name)) {
          throw new HttpException(409, `Item "${body.name}" exists`);
        }
        if (body.price > 1000) return json({ queued: true }, { status: 202 });
        const item = { id: db.id(), name: body.name, price: body.price, tags: body.tags ?? [] };
        db.items.set(item.id, item);
        return json(item, { status: 201 });
      }),
    "PUT /items/:id": endpoint()
      .params({ id: Int })
      .body(NewItem)
      .returns(Item)
      .mayThrow("NotFound")
      .handle(async (ctx) => {
        find(ctx.params.id);
        const body = await ctx.body();
        const item = {
          id: ctx.params.id,
          name: body.name,
          price: body.price,
          tags: body.tags ?? [],
        };
        db.items.set(item.id, item);
        return item;
      }),
    "PATCH /items/:id": endpoint()
      .params({ id: Int })
      .body({ price: Min(0) })
      .returns(Item)
      .mayThrow("NotFound")
      .handle(async (ctx) => {
        const item = { ...find(ctx.params.id), price: (await ctx.body()).price };
        db.items.set(item.id, item);
        return item;
      }),
    "DELETE /items/:id": endpoint()
      .params({ id: Int })
      .returns(204, "Deleted")
      .handle((ctx) => {
        db.items.delete(ctx.params.id);
      }),
    "GET /files/*path": endpoint((ctx) => ({ path: ctx.params.path })),
    "GET /old": endpoint(() => HttpResponse.redirect("/items/1", 302)),
    "GET /me": endpoint()
      .secure()
      .returns({ sub: String })
      .handle(() => ({ sub: String(useContext<{ user: AuthUser }>().user.sub) })),
    "GET /limited": endpoint()
      .rateLimit({ max: 1, windowMs: 3_600_000 })
      .returns({ ok: Boolean })
      .handle(() => ({ ok: true })),
    "GET /boom": endpoint().returns({ ok: Boolean }).handle((): { ok: boolean } => {
      throw new Error("boom");
    }),
    "GET /prices": endpoint()
      .query({ symbol: Optional(String) })
      .returns(Stream({ symbol: String, price: Int }))
      .handle(async (ctx) => {
        const start = ctx.lastEventId === undefined ? 0 : Number(ctx.lastEventId) + 1;
        for (let i = start; i < 3; i++) {
          await ctx.send({ symbol: ctx.queryParams().symbol ?? "FW", price: 100 + i }, { id: i });
        }
      }),
    "GET /broken": endpoint()
      .returns(Stream({ n: Int }))
      .handle(async (ctx) => {
        await ctx.send({ n: 1 });
        throw new NotFoundException("The feed went away");
      }),
    "GET /chat/:room": endpoint()
      .params({ room: MinLength(1) })
      .body(Stream({ text: MinLength(1) }))
      .returns(Stream({ room: String, echo: String }))
      .handle(async (ctx) => {
        for await (const { text } of ctx.messages()) {
          await ctx.send({ room: ctx.params.room, echo: text.toUpperCase() });
        }
      }),
    "GET /sum": endpoint()
      .body(Stream({ n: Int }))
      .returns({ sum: Int })
      .handle(async (ctx) => {
        let sum = 0;
        for await (const { n } of ctx.messages()) sum += n;
        return { sum };
      }),
  };
}

/** The route map of the test application. */
export type ClientRoutes = ReturnType<typeof makeClientRoutes>;

/**
 * The test application: `oauth()` for `/me`, the routes, served on a free port when `serve`.
 *
 * @param serve Listen on 127.0.0.1 with a free port.
 * @returns The application (not started).
 */
export function clientApp(serve = true): Application {
  const app = application({ logger: createLogger({ sink: new MemorySink() }) });
  if (serve) app.use(http({ port: 0, hostname: "127.0.0.1", signals: false }));
  app.use(oauth({ issuer: CLIENT_APP_ISSUER, audience: "client-app", secret: CLIENT_APP_SECRET }));
  const plugin = api({ autoScan: false });
  for (const [key, def] of Object.entries(makeClientRoutes())) {
    const [method, path] = key.split(" ");
    plugin.route(method, path, def);
  }
  return app.use(plugin);
}

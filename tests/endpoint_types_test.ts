/**
 * Type tests for the endpoint builder: handler types inferred from the schemas. `deno check` fails
 * if any `@ts-expect-error` line stops being an error, or if a correct line stops compiling.
 */

import assert from "node:assert/strict";
import {
  ArrayOf,
  endpoint,
  type EndpointContext,
  HttpResponse,
  type InferSchema,
  Int,
  json,
  notFound,
  Optional,
  schema,
  type ServerStreamContext,
  Stream,
  type StreamContext,
} from "@fw/application";
import { provider } from "@fw/runtime";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;
function expectType<T extends true>(_: T): void {}

const User = schema("User", { id: Int, name: String, email: Optional(String) });
type User = InferSchema<typeof User>;

Deno.test("endpoint() types ctx.params, ctx.queryParams() and ctx.body() from the schemas", () => {
  const def = endpoint()
    .params({ id: Int })
    .query({ tags: ArrayOf(String), page: Optional(Int) })
    .body({ name: String, age: Int })
    .returns(User)
    .handle(async (ctx) => {
      expectType<Equal<typeof ctx.params, { id: number }>>(true);
      expectType<Equal<ReturnType<typeof ctx.queryParams>, { tags: string[]; page?: number }>>(
        true,
      );
      const body = await ctx.body();
      expectType<Equal<typeof body, { name: string; age: number }>>(true);
      // @ts-expect-error params.id is a number
      const s: string = ctx.params.id;
      // @ts-expect-error no such param
      ctx.params.slug;
      // @ts-expect-error no such query key
      ctx.queryParams().limit;
      // @ts-expect-error body.age is a number
      body.age.toUpperCase();
      void s;
      return { id: ctx.params.id, name: body.name };
    });
  assert.equal(def.mode, "unary");
});

Deno.test("endpoint() without schemas gives raw string params and an unknown body", () => {
  endpoint((ctx) => {
    expectType<Equal<typeof ctx.params, Record<string, string>>>(true);
    expectType<Equal<ReturnType<typeof ctx.queryParams>, Record<string, string>>>(true);
    expectType<Equal<Awaited<ReturnType<typeof ctx.body>>, unknown>>(true);
    expectType<Equal<typeof ctx, EndpointContext>>(true);
    return ctx.params.anything;
  });
  endpoint().handle((ctx) => {
    const n: number = ctx.statusCode;
    ctx.statusCode = 201;
    // @ts-expect-error statusCode is a number
    ctx.statusCode = "201";
    // @ts-expect-error route is read-only
    ctx.route = "/x";
    const parts: string[] = [ctx.url, ctx.route, ctx.path(), ctx.query(), ctx.host(), ctx.domain()];
    const flags: boolean[] = [ctx.secured()];
    const raw: Request = ctx.req;
    const headers: Headers = ctx.headers;
    const port: number = ctx.server.port;
    return { n, parts, flags, method: raw.method, h: headers.get("x"), port };
  });
});

Deno.test("endpoint() checks the handler's return against .returns() loosely", () => {
  endpoint().returns(User).handle(() => ({ id: 1, name: "Ada" }));
  endpoint().returns(User).handle(() => Promise.resolve({ id: 1, name: "Ada", email: "a@b.c" }));
  endpoint().returns(User).handle(() => notFound("no"));
  endpoint().returns(User).handle(() => json({ anything: true }));
  endpoint().returns(User).handle(() => new HttpResponse(null, { status: 304 }));
  endpoint().returns(User).handle(() => new Response("raw"));
  endpoint().returns(User).handle(() => undefined);
  endpoint().returns(User).handle(() => '{"id":1,"name":"Ada"}');
  endpoint().returns(ArrayOf(User)).handle(() => [{ id: 1, name: "Ada" }]);
  // @ts-expect-error id must be a number
  endpoint().returns(User).handle(() => ({ id: "1", name: "Ada" }));
  // @ts-expect-error name is required
  endpoint().returns(User).handle(() => Promise.resolve({ id: 1 }));
  // @ts-expect-error an array where an object is declared
  endpoint().returns(User).handle(() => [{ id: 1, name: "Ada" }]);
  // @ts-expect-error a number where an object is declared
  endpoint().returns(201, "Created", User).handle(() => 42);
  endpoint().returns(204, "Deleted").handle(() => undefined);
  endpoint().returns(202).handle(() => ({ anything: 1 }));
});

Deno.test("endpoint() lets the handler return any declared .response() body", () => {
  endpoint()
    .returns(User)
    .response(202, "Queued", { ticket: String })
    .handle((ctx) => (ctx.params.x ? { ticket: "t1" } : { id: 1, name: "Ada" }));
  endpoint()
    .returns(User)
    .response(202, "Queued", { ticket: String })
    // @ts-expect-error ticket must be a string
    .handle(() => ({ ticket: 1 }));
});

Deno.test("endpoint().inject() switches the handler to (deps, ctx)", () => {
  const Db = provider({
    name: "Db",
    factory: () => ({ find: (id: number) => ({ id, name: "Ada" }) }),
  });
  const Clock = provider({
    name: "Clock",
    lifetime: "scoped",
    factory: () => ({ now: () => Date.now() }),
  });
  endpoint()
    .params({ id: Int })
    .inject({ db: Db, clock: Clock })
    .returns(User)
    .handle(({ db, clock }, ctx) => {
      expectType<Equal<ReturnType<typeof clock.now>, number>>(true);
      return db.find(ctx.params.id);
    });
  endpoint()
    .inject({ db: Db })
    // @ts-expect-error no such dependency
    .handle(({ cache }) => cache);
  endpoint()
    .inject({ db: Db })
    // @ts-expect-error the first argument is deps, not ctx
    .handle((ctx: EndpointContext) => ctx.path());
});

Deno.test("endpoint() gives stream endpoints a stream ctx", () => {
  const Msg = { text: String };
  const server = endpoint().returns(Stream(Msg)).handle(async (ctx) => {
    expectType<
      Equal<
        typeof ctx,
        ServerStreamContext<
          Record<string, string>,
          Record<string, string>,
          unknown,
          { text: string }
        >
      >
    >(true);
    await ctx.send({ text: "hi" });
    // @ts-expect-error messages carry text
    await ctx.send({ body: "hi" });
  });
  const bidi = endpoint().body(Stream(Msg)).returns(Stream({ n: Int })).handle(async (ctx) => {
    expectType<
      Equal<
        typeof ctx,
        StreamContext<
          Record<string, string>,
          Record<string, string>,
          { text: string },
          { n: number }
        >
      >
    >(true);
    for await (const m of ctx.messages()) {
      expectType<Equal<typeof m, { text: string }>>(true);
      await ctx.send({ n: m.text.length });
    }
  });
  const client = endpoint().body(Stream(Msg)).returns({ count: Int }).handle(async (ctx) => {
    let count = 0;
    for await (const _ of ctx.messages()) count++;
    return { count };
  });
  assert.deepEqual([server.mode, bidi.mode, client.mode], [
    "server-stream",
    "bidi",
    "client-stream",
  ]);
});

Deno.test("endpoint() types the server-stream body, send options and async-iterable results", () => {
  const Tick = { n: Int };
  endpoint().body({ from: Int }).returns(Stream(Tick)).handle(async (ctx) => {
    const body = await ctx.body();
    expectType<Equal<typeof body, { from: number }>>(true);
    expectType<Equal<typeof ctx.lastEventId, string | undefined>>(true);
    expectType<Equal<typeof ctx.transport, "sse" | "websocket">>(true);
    await ctx.send({ n: body.from }, { id: 7, event: "tick" });
    // @ts-expect-error a server stream has no incoming messages
    for await (const m of ctx.messages()) m.n;
  });
  endpoint().returns(Stream(Tick)).handle(async function* () {
    yield { n: 1 };
  });
  endpoint().returns(Stream(Tick)).handle(
    // @ts-expect-error the iterable must yield messages of the stream schema
    async function* () {
      yield { n: "one" };
    },
  );
});

Deno.test("endpoint() builder methods reject wrong arguments at compile time", () => {
  const b = endpoint();
  assert.throws(() => {
    // @ts-expect-error not a schema
    b.params({ id: 42 });
  });
  assert.throws(() => {
    // @ts-expect-error not a known error code
    b.mayThrow("Teapot");
  });
  assert.throws(() => {
    // @ts-expect-error max is required
    b.rateLimit({ windowMs: 1000 });
  });
  // @ts-expect-error .handle() comes last: a definition has no builder methods
  assert.throws(() => b.handle(() => "x").params({ id: Int }));
});

/**
 * `GET /feed`: live quotes as Server-Sent Events (or over a WebSocket). A browser that
 * reconnects sends `Last-Event-ID` and gets the quotes it missed from the replay buffer; event ids
 * are the hub's sequence numbers.
 *
 * @module
 */

import { endpoint, Optional, Pattern, Stream } from "@fw/application";
import { Quote } from "../../schemas.ts";
import { Feed } from "../../services.ts";

export default endpoint()
  .description("Live quotes; resumes after Last-Event-ID")
  .query({ symbol: Optional(Pattern(/^[A-Z]{2,8}$/)) })
  .returns(Stream(Quote))
  .inject({ feed: Feed })
  .handle(async ({ feed }, ctx) => {
    const { symbol } = ctx.queryParams();
    const after = ctx.lastEventId === undefined ? undefined : Number(ctx.lastEventId);
    for await (const { seq, value } of feed.hub.subscribe(ctx.signal, after)) {
      if (symbol === undefined || value.symbol === symbol) await ctx.send(value, { id: seq });
    }
  });

/**
 * `GET /chat/:room?name=...` over a WebSocket: a bidirectional stream. Each member receives the
 * last messages of the room, then every message, join and leave; what a member sends is
 * validated and published to the room.
 *
 * @module
 */

import { endpoint, MaxLength, MinLength, Pattern, Stream } from "@fw/application";
import { ChatEvent, ChatInput } from "../../schemas.ts";
import { Chat, type ChatMessage } from "../../services.ts";

export default endpoint()
  .description("Chat room over a WebSocket")
  .params({ room: Pattern(/^[a-z0-9-]{1,32}$/) })
  .query({ name: MaxLength(32, MinLength(1)) })
  .body(Stream(ChatInput))
  .returns(Stream(ChatEvent))
  .inject({ chat: Chat })
  .handle(async ({ chat }, ctx) => {
    const room = chat.room(ctx.params.room);
    const from = ctx.queryParams().name;
    const say = (kind: string, text?: string): ChatMessage => ({
      kind,
      from,
      text,
      at: new Date().toISOString(),
    });
    const left = new AbortController();
    const signal = AbortSignal.any([ctx.signal, left.signal]);
    const history = room.recent(20);
    const feed = room.subscribe(signal);
    const forward = (async () => {
      for (const { value } of history) await ctx.send(value);
      for await (const { value } of feed) await ctx.send(value);
    })();
    // the member may leave while a send is in flight: that rejection must not go unhandled (it
    // would end the process) while the loop below is still reading
    forward.catch(() => {});
    room.publish(say("join"));
    try {
      for await (const { text } of ctx.messages()) room.publish(say("message", text));
    } finally {
      left.abort();
      room.publish(say("leave"));
    }
    await forward;
  });

/**
 * `GET /stats`: how many clients are connected.
 *
 * @module
 */

import { ArrayOf, endpoint, Int } from "@fw/application";
import { Chat, Feed } from "../../services.ts";

export default endpoint()
  .returns({
    feedSubscribers: Int,
    quotesPublished: Int,
    rooms: ArrayOf({ name: String, members: Int }),
  })
  .inject({ feed: Feed, chat: Chat })
  .handle(({ feed, chat }) => ({
    feedSubscribers: feed.hub.subscribers,
    quotesPublished: feed.hub.seq,
    rooms: chat.members(),
  }));

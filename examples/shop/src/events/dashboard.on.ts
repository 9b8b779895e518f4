import { handler } from "@fw/events";
import { Live } from "../services.ts";
import { OrderChanged } from "../topics.ts";

/**
 * Dashboards: every instance (broadcast) forwards order changes to its own open dashboards, so
 * a browser connected to any instance sees orders placed and paid on all of them.
 */
export default handler(OrderChanged)
  .options({ group: "dashboard", distribution: "broadcast" })
  .inject({ live: Live })
  .handle(({ live }, msg) => live.publish(msg.payload));

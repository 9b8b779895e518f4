import { getPublisher, handler } from "@fw/events";
import { summaryOf } from "../schemas.ts";
import { Payments, Store } from "../services.ts";
import { OrderChanged, OrderPlaced } from "../topics.ts";

/** Retries after the first attempt (half a second apart): then the event is dead-lettered. */
export const PAYMENT_RETRIES = 3;

const changed = getPublisher(OrderChanged);

/**
 * Payments: charges each placed order once (competing consumers: one instance per order). A
 * failed charge is retried; when the last attempt fails too, the order is marked
 * `payment_failed` and the event goes to the dead letters, where an admin can redrive it.
 */
export default handler(OrderPlaced)
  .options({ group: "payments", maxRetries: PAYMENT_RETRIES, maxBackoff: 500, timeout: 10_000 })
  .inject({ store: Store, payments: Payments })
  .handle(async ({ store, payments }, msg) => {
    const { orderId, total, paymentToken } = msg.payload;
    const order = await store.getOrder(orderId);
    if (order === undefined) return;
    if (order.status === "paid") {
      // A duplicate, or the retry of an attempt that charged and stored the payment but stopped
      // (timed out, or its process died) before it said so: say it again, since at-least-once
      // delivery means the change may never have been published (its consumers take a repeated
      // summary as it is).
      await changed(summaryOf(order));
      return;
    }
    try {
      await payments.charge({ orderId, amount: total, token: paymentToken });
    } catch (err) {
      if (msg.attempt > PAYMENT_RETRIES) {
        const failed = await store.setStatus(orderId, "payment_failed", String(err));
        if (failed) await changed(summaryOf(failed));
      }
      throw err;
    }
    const paid = await store.setStatus(orderId, "paid");
    if (paid) await changed(summaryOf(paid));
  });

import { ArrayOf, endpoint } from "@fw/application";
import { ADMIN_SCOPE } from "../../../config.ts";
import { type DeadLetterView, DeadLetterView as View } from "../../../schemas.ts";
import { DeadLetters } from "../../../services.ts";

/**
 * GET /admin/dead-letters: events whose handler gave up after its retries (admin scope). They are
 * kept in Deno KV, so every instance lists the same ones.
 */
export default endpoint()
  .description("Events whose handler gave up, oldest first")
  .secure({ scopes: [ADMIN_SCOPE] })
  .returns(ArrayOf(View))
  .inject({ dead: DeadLetters })
  .handle(async ({ dead }): Promise<DeadLetterView[]> =>
    (await dead.deadLetters()).map(({ envelope, deadAt }) => {
      const a = envelope.attributes;
      const orderId = (envelope.payload as { orderId?: unknown }).orderId;
      return {
        id: envelope.id,
        topic: a["dlq.original_topic"] ?? envelope.topic,
        handler: a["dlq.handler"] ?? "",
        attempts: Number(a["dlq.attempts"] ?? 0),
        error: a["dlq.error"] ?? "",
        deadAt: new Date(deadAt).toISOString(),
        ...(typeof orderId === "string" ? { orderId } : {}),
      };
    })
  );

/**
 * Checks a received payload against its topic: the topic's own validator (`topic().validate`), or
 * for a topic given by name the JSON Schema the server lists in its discovery document, compiled
 * once per topic. Internal.
 *
 * @module
 */

import type { DiscoveryDocument } from "../protocol/frames.ts";
import { checkSchema, type JsonSchema } from "../protocol/_json_schema.ts";
import type { ClientTopic } from "./subscription.ts";

/** Per-topic checks built from the discovery document. */
export type ValidatorCache = Map<string, (value: unknown) => string | undefined>;

/**
 * The problems of `payload` for `topic`, joined, or undefined when it is valid (or when nothing
 * is known about the topic's schema).
 *
 * @param topic The subscription's topic.
 * @param discovery The server's discovery document, when read.
 * @param cache Checks built so far.
 * @param payload The received payload.
 * @returns The problem, or undefined.
 */
export function payloadProblem(
  topic: ClientTopic<unknown>,
  discovery: DiscoveryDocument | undefined,
  cache: ValidatorCache,
  payload: unknown,
): string | undefined {
  if (topic.validate) {
    const r = topic.validate(payload);
    return r.ok ? undefined : r.errors.map((e) => e.message).join("; ");
  }
  let check = cache.get(topic.name);
  if (!check) {
    const schema = discovery?.topics.find((t) => t.name === topic.name)?.schema;
    check = schema
      ? (v) => {
        const issues = checkSchema(schema as JsonSchema, v, () => undefined, "payload");
        return issues.length ? issues.map((i) => `${i.field} ${i.message}`).join("; ") : undefined;
      }
      : () => undefined;
    cache.set(topic.name, check);
  }
  return check(payload);
}

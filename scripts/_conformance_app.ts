/**
 * fw's own Event Server set up for the conformance manifest: the topics `conformance.echo` (open
 * to everyone) and `conformance.private` (closed to anonymous clients), on `Deno.serve` at a free
 * port. Used by `scripts/conformance_eventserver.ts` (with no URL) and by the tests.
 *
 * @module
 */

import { type Application, application, http } from "@fw/application";
import { Int, Optional, topic } from "@fw/events";
import { eventServer, type EventServerOptions } from "@fw/events/server";
import { createLogger } from "@fw/runtime";

/** The open conformance topic. */
export const ConformanceEcho = topic("conformance.echo", { n: Int, text: Optional(String) });
/** The closed conformance topic. */
export const ConformancePrivate = topic("conformance.private", { n: Int });

/**
 * Starts an app serving the conformance topics.
 *
 * @param options More Event Server options.
 * @returns The started app and its base URL.
 */
export async function startConformanceApp(
  options: Partial<EventServerOptions> = {},
): Promise<{ app: Application; url: string }> {
  const app = application({ logger: createLogger({ level: "error" }) })
    .use(http({ port: 0, hostname: "127.0.0.1", signals: false }))
    .use(eventServer({
      topics: [ConformanceEcho, ConformancePrivate],
      access: (user, name) => name !== ConformancePrivate.name || user !== undefined,
      ...options,
    }));
  await app.start();
  return { app, url: `http://127.0.0.1:${app.address!.port}` };
}

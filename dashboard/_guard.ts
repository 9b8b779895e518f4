/**
 * The dashboard's checks on state-changing calls: a POST whose `Origin` (or `Sec-Fetch-Site`)
 * says it comes from another site is refused with 403, so a page elsewhere cannot drive an
 * administrator's browser; and the acting user, for the log line. Internal.
 *
 * @module
 */

import { type AuthUser, ForbiddenException, tryContext } from "@fw/runtime";

/**
 * Refuses a cross-origin request. A request with no `Origin` (curl, the CLI) goes on: it carries
 * its token itself, so no other site can make it.
 *
 * @param req The request.
 * @param trustProxy Whether `X-Forwarded-Host` names the host (behind a trusted proxy).
 * @throws {ForbiddenException} When `Origin` names another host, or the browser says cross-site.
 */
export function checkOrigin(req: Request, trustProxy: boolean): void {
  const site = req.headers.get("sec-fetch-site");
  if (site === "cross-site") {
    throw new ForbiddenException('Cross-origin request refused: Sec-Fetch-Site is "cross-site"');
  }
  const origin = req.headers.get("origin");
  if (origin === null) return;
  const forwarded = trustProxy ? req.headers.get("x-forwarded-host")?.split(",")[0].trim() : null;
  const host = forwarded || req.headers.get("host") || new URL(req.url).host;
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = undefined;
  }
  if (originHost !== host) {
    throw new ForbiddenException(
      `Cross-origin request refused: Origin "${origin}" does not match host "${host}"`,
    );
  }
}

/** Who is acting, for the log: the token's subject (or email), else `anonymous`. */
export function actor(): string {
  const user = tryContext<{ user?: AuthUser }>()?.user;
  return user?.sub ?? user?.email ?? user?.client_id ?? "anonymous";
}

/**
 * `cli dlq list|redrive|discard --url <app>`: the dead letters of a running application, through
 * the JSON API of its operations dashboard (`@fw/dashboard`; this module only speaks HTTP, so the
 * command line loads nothing of the dashboard). The bearer token comes from `FW_DASHBOARD_TOKEN`.
 * Redrive and discard by topic (or `--all`) go page by page (500 ids a request) and write a
 * progress line while they work through thousands. Internal to the command line.
 *
 * @module
 */

/** What the command reads and writes (tests pass their own). */
export interface DlqIo {
  /** Environment variable reader. */
  env(name: string): string | undefined;
  /** Writes a result line. */
  out(line: string): void;
  /** Writes progress (a line that is rewritten: no newline). */
  progress(text: string): void;
  /** Writes an error line. */
  err(line: string): void;
}

interface Item {
  id: string;
  topic: string;
  transport: string;
  attempts: number;
  error: string;
  deadAt: string;
}

interface Page {
  items: Item[];
  next: string | null;
  total: number;
}

/** The usage text of `dlq`. */
export const DLQ_USAGE = `usage: cli dlq <list|redrive|discard> --url <app> [options]

  --url <url>        the application (its dashboard at <url>/_fw unless --path)
  --path <path>      where the dashboard is mounted (default /_fw)
  --topic <name>     only the dead letters of this topic
  --ids <a,b,...>    only these message ids (redrive, discard)
  --all              every dead letter (redrive, discard without --topic or --ids)
  --limit <n>        list: how many to show (default 50)
  --yes              discard: confirm (deleted dead letters cannot come back)

The bearer token is read from FW_DASHBOARD_TOKEN.`;

const BATCH = 500;

/** A mistake in the command or an answer of the application, shown as it is. */
class DlqError extends Error {
  override readonly name = "DlqError";
}

function parse(args: string[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--all" || a === "--yes") o[a.slice(2)] = "1";
    else if (["--url", "--path", "--topic", "--ids", "--limit"].includes(a)) {
      if (args[i + 1] === undefined) throw new DlqError(`Missing value of "${a}"`);
      o[a.slice(2)] = args[++i];
    } else throw new DlqError(`Unknown option "${a}"`);
  }
  return o;
}

/** Calls the dashboard API; a failed call becomes a readable error. */
async function call(base: string, path: string, token: string | undefined, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const data = await res.json().catch(() => ({}));
  if (res.status === 401) {
    throw new DlqError(
      `${base} answered 401: set FW_DASHBOARD_TOKEN to a bearer token the dashboard accepts`,
    );
  }
  if (!res.ok) throw new DlqError(`${base}${path} answered ${res.status}: ${data.message ?? ""}`);
  return data;
}

/**
 * Runs `dlq`.
 *
 * @param args The arguments after `dlq`.
 * @param io Environment and output.
 * @returns The exit code.
 */
export async function dlq(args: string[], io: DlqIo): Promise<number> {
  const [action, ...rest] = args;
  try {
    if (!["list", "redrive", "discard"].includes(action ?? "")) {
      throw new DlqError(`Unknown dlq action "${action ?? ""}"`);
    }
    const o = parse(rest);
    if (!o.url) throw new DlqError('Missing "--url": the application\'s address');
    const base = `${o.url.replace(/\/+$/, "")}${o.path ?? "/_fw"}/api/dead-letters`;
    const token = io.env("FW_DASHBOARD_TOKEN");
    const topicQuery = o.topic ? `&topic=${encodeURIComponent(o.topic)}` : "";
    if (action === "list") {
      const limit = Number(o.limit ?? 50);
      if (!Number.isInteger(limit) || limit < 1) throw new DlqError('Invalid "--limit"');
      let shown = 0, total = 0, cursor: string | null = null;
      do {
        const size = Math.min(BATCH, limit - shown);
        const page: Page = await call(
          base,
          `?limit=${size}${topicQuery}${cursor ? `&cursor=${cursor}` : ""}`,
          token,
        );
        total = page.total;
        for (const d of page.items) {
          io.out(
            `${d.id}  ${d.topic}  ${d.transport}  attempts=${d.attempts}  ${d.deadAt}  ${d.error}`,
          );
        }
        shown += page.items.length;
        cursor = page.next;
      } while (cursor && shown < limit);
      io.out(`${shown} of ${total} dead letters${o.topic ? ` of topic "${o.topic}"` : ""}`);
      return 0;
    }
    if (action === "discard" && !o.yes) {
      throw new DlqError('Discarding deletes dead letters for good: add "--yes" to confirm');
    }
    const verb = action === "redrive" ? "redriven" : "discarded";
    if (o.ids) {
      const ids = o.ids.split(",").map((s) => s.trim()).filter(Boolean);
      const { moved } = await call(base, `/${action}`, token, { ids });
      io.out(`${moved} dead letters ${verb}`);
      return 0;
    }
    if (!o.topic && !o.all) throw new DlqError('Give "--topic", "--ids" or "--all"');
    let moved = 0;
    for (;;) {
      const page: Page = await call(base, `?limit=${BATCH}${topicQuery}`, token);
      if (page.items.length === 0) break;
      const batch = await call(base, `/${action}`, token, { ids: page.items.map((d) => d.id) });
      moved += batch.moved;
      io.progress(`${verb} ${moved} of ${moved + page.total - page.items.length}`);
      if (batch.moved === 0) break; // someone else took them; do not spin
    }
    io.out(`${moved} dead letters ${verb}`);
    return 0;
  } catch (error) {
    const mine = error instanceof DlqError;
    const unreachable = !mine && error instanceof TypeError;
    if (!mine && !unreachable) throw error;
    const message = (error as Error).message;
    io.err(unreachable ? `Cannot reach the application: ${message}` : message);
    if (unreachable) return 1;
    io.err("");
    io.err(DLQ_USAGE);
    return 2;
  }
}

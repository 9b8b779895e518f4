/**
 * The interactive documentation page of `api({ openapi: { docs } })`: Swagger UI, served from the
 * files of the `swagger-ui-dist` npm package, so the page never loads anything from a CDN. A
 * Content-Security-Policy keeps it that way.
 *
 * The files are imported as text (import attributes), not read from disk: they are part of the
 * module graph, so a bundle (`deno bundle`, a Deno Deploy build) carries them and the page works
 * with no file-system access at all. The two big ones (1.5 MB) are imported dynamically on the first
 * request for them, so start-up neither loads nor parses them.
 *
 * Only `_serve.ts` imports this module, dynamically, on the first request for the page or a file.
 *
 * @module
 */

import type { RouteRegistration } from "@fw/runtime";

/** What the page needs to know. */
export interface DocsPageOptions {
  /** Where the page is served (`/docs`); assets live below it. */
  readonly path: string;
  /** Where the JSON document is served (`/openapi.json`). */
  readonly specUrl: string;
  /** The API title, for the page title. */
  readonly title: string;
  /** Server URLs of the document: their origins may be called by "Try it out". */
  readonly servers: readonly string[];
}

interface Asset {
  readonly body: Uint8Array<ArrayBuffer>;
  readonly type: string;
  readonly etag: string;
}

const encoder = new TextEncoder();

/** A small icon of our own (an SVG is text; binary imports are not stable in Deno yet). */
const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="#85ea2d"/><text x="16" y="22" font-family="monospace" font-size="16" text-anchor="middle" fill="#173647">{}</text></svg>';

/** The Swagger UI files the page links to: loaded on their first request, with content types. */
const LAZY_FILES: ReadonlyArray<readonly [string, () => Promise<{ default: string }>, string]> = [
  [
    "swagger-ui.css",
    () => import("swagger-ui-dist/swagger-ui.css", { with: { type: "text" } }),
    "text/css; charset=utf-8",
  ],
  [
    "swagger-ui-bundle.js",
    () => import("swagger-ui-dist/swagger-ui-bundle.js", { with: { type: "text" } }),
    "text/javascript; charset=utf-8",
  ],
];

async function asset(body: Uint8Array<ArrayBuffer>, type: string): Promise<Asset> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
  const hex = [...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { body, type, etag: `"${hex}"` };
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(options: DocsPageOptions): string {
  const p = escapeHtml(options.path);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}: API documentation</title>
<link rel="stylesheet" href="${p}/swagger-ui.css">
<link rel="icon" type="image/svg+xml" href="${p}/favicon.svg">
</head>
<body style="margin:0;background:#fafafa">
<div id="swagger-ui"></div>
<script src="${p}/swagger-ui-bundle.js"></script>
<script src="${p}/init.js"></script>
</body>
</html>
`;
}

function init(options: DocsPageOptions): string {
  const config = {
    url: options.specUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    displayRequestDuration: true,
  };
  return `window.ui = SwaggerUIBundle(${JSON.stringify(config)});\n`;
}

function policy(servers: readonly string[]): string {
  const origins = new Set<string>();
  for (const url of servers) {
    if (URL.canParse(url)) origins.add(new URL(url).origin);
  }
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self'${[...origins].map((o) => ` ${o}`).join("")}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
  ].join("; ");
}

/**
 * The routes of the page and its assets.
 *
 * @param options Page path, document URL, title and servers.
 * @returns GET routes: the page, `init.js`, the stylesheet, the bundle and the icon.
 */
export function docsRoutes(options: DocsPageOptions): RouteRegistration[] {
  const csp = policy(options.servers);
  const routes: RouteRegistration[] = LAZY_FILES.map(([file, load, type]) => {
    let ready: Promise<Asset> | undefined;
    return {
      method: "GET",
      path: `${options.path}/${file}`,
      handler: (req: Request) => {
        ready ??= load().then((m) => asset(encoder.encode(m.default), type));
        return ready.then((a) => respond(req, a, csp));
      },
    };
  });
  // The page, its start-up script and its icon are made (and hashed for their ETag) on the first
  // request for each, like the Swagger UI files: start-up does no work for them.
  const small: [string, () => string, string][] = [
    [`${options.path}/favicon.svg`, () => ICON, "image/svg+xml"],
    [`${options.path}/init.js`, () => init(options), "text/javascript; charset=utf-8"],
    [options.path, () => page(options), "text/html; charset=utf-8"],
  ];
  for (const [path, body, type] of small) {
    let ready: Promise<Asset> | undefined;
    routes.push({
      method: "GET",
      path,
      handler: (req: Request) => {
        ready ??= asset(encoder.encode(body()), type);
        return ready.then((a) => respond(req, a, csp));
      },
    });
  }
  return routes;
}

function respond(req: Request, a: Asset, csp: string): Response {
  const headers: Record<string, string> = {
    "content-type": a.type,
    "cache-control": "no-cache",
    etag: a.etag,
    "x-content-type-options": "nosniff",
  };
  if (a.type.startsWith("text/html")) headers["content-security-policy"] = csp;
  if (req.headers.get("if-none-match") === a.etag) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(a.body, { headers });
}

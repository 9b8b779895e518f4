/**
 * The interactive documentation page of `api({ openapi: { docs } })`: Swagger UI, served from the
 * files of the `swagger-ui-dist` npm package (read from Deno's npm cache by `_docs_assets.ts` the
 * first time the page asks for them, so start-up neither loads the package nor reads its 1.5 MB),
 * so the page never loads anything from a CDN. A Content-Security-Policy keeps it that way.
 *
 * Only `_serve.ts` imports this module, dynamically, when `docs` is set.
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

const FILES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const encoder = new TextEncoder();

async function asset(body: Uint8Array<ArrayBuffer>, type: string): Promise<Asset> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
  const hex = [...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { body, type, etag: `"${hex}"` };
}

/** One Swagger UI file, read and hashed on first request (a failed read is retried next time). */
function lazyAsset(file: string, type: string): () => Promise<Asset> {
  let loading: Promise<Asset> | undefined;
  return () =>
    loading ??= import("./_docs_assets.ts")
      .then(({ readSwaggerFile }) => readSwaggerFile(file))
      .then((body) => asset(body, type))
      .catch((error) => {
        loading = undefined;
        throw error;
      });
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
<link rel="icon" type="image/png" href="${p}/favicon-32x32.png">
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

/**
 * The routes of the page and its assets. The page and `init.js` are built here; the Swagger UI
 * files are read on their first request.
 *
 * @param options Page path, document URL, title and servers.
 * @returns GET routes: the page, `init.js`, the stylesheet, the bundle and the icon.
 */
export async function docsRoutes(options: DocsPageOptions): Promise<RouteRegistration[]> {
  const csp = policy(options.servers);
  const routes: RouteRegistration[] = [];
  for (const [file, type] of Object.entries(FILES)) {
    const load = lazyAsset(file, type);
    routes.push({
      method: "GET",
      path: `${options.path}/${file}`,
      handler: (req: Request) => load().then((a) => respond(req, a, csp)),
    });
  }
  const built = [
    [`${options.path}/init.js`, init(options), "text/javascript; charset=utf-8"],
    [options.path, page(options), "text/html; charset=utf-8"],
  ];
  for (const [path, text, type] of built) {
    const a = await asset(encoder.encode(text), type);
    routes.push({ method: "GET", path, handler: (req: Request) => respond(req, a, csp) });
  }
  return routes;
}

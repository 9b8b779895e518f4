/**
 * The dashboard's page: one HTML document whose script and style come from the same module
 * graph (`script.ts`, `style.ts`), so the dashboard runs from a bundle with no file access and
 * loads nothing from a CDN. Internal.
 *
 * @module
 */

function escapeAttr(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/**
 * The page's HTML.
 *
 * @param base The dashboard's path, such as `/_fw`.
 * @returns The document.
 */
export function pageHtml(base: string): string {
  const b = escapeAttr(base);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="fw-base" content="${b}">
<title>fw dashboard</title>
<link rel="stylesheet" href="${b}/app.css">
<script type="module" src="${b}/app.js"></script>
</head>
<body>
<header>
  <strong>fw</strong> dashboard
  <nav>
    <a href="#overview" data-view="overview">Overview</a>
    <a href="#queues" data-view="queues">Queues</a>
    <a href="#dead-letters" data-view="dead-letters">Dead letters <span id="dead-count" class="badge"></span></a>
    <a href="#event-server" data-view="event-server">Event Server</a>
    <a href="#schedules" data-view="schedules">Schedules</a>
    <a href="#traces" data-view="traces">Traces</a>
  </nav>
  <span id="live" class="live off">connecting</span>
</header>
<main>
  <form id="login" hidden>
    <p>This dashboard needs a bearer token.</p>
    <input id="token" type="password" placeholder="Bearer token" autocomplete="off">
    <button type="submit">Sign in</button>
    <p id="login-error" class="error"></p>
  </form>
  <section id="view-overview" class="view">
    <h2>Routes <small id="window"></small></h2>
    <table id="routes"><thead><tr><th>Method</th><th>Route</th><th>req/s</th><th>p50 ms</th><th>p99 ms</th><th>errors</th><th>total</th></tr></thead><tbody></tbody></table>
    <h2>Topics</h2>
    <table id="topics"><thead><tr><th>Topic</th><th>publish/s</th><th>published</th><th>failed</th></tr></thead><tbody></tbody></table>
    <h2>Handlers</h2>
    <table id="handlers"><thead><tr><th>Handler</th><th>Topic</th><th>Group</th><th>Transport</th><th>in flight</th><th>queued</th><th>success</th><th>failure</th><th>retry</th><th>dead-lettered</th></tr></thead><tbody></tbody></table>
  </section>
  <section id="view-queues" class="view" hidden><div id="queues"></div></section>
  <section id="view-dead-letters" class="view" hidden>
    <div class="toolbar">
      <label>Topic <select id="dl-topic"><option value="">all topics</option></select></label>
      <button id="dl-redrive">Redrive selected</button>
      <button id="dl-redrive-topic">Redrive all of topic</button>
      <button id="dl-discard" class="danger">Discard selected</button>
      <span id="dl-status"></span>
    </div>
    <table id="dead-letters"><thead><tr><th><input type="checkbox" id="dl-all"></th><th>Message</th><th>Topic</th><th>Transport</th><th>Attempts</th><th>Last error</th><th>Dead at</th><th>Payload and attributes</th></tr></thead><tbody></tbody></table>
    <p id="dl-empty" class="empty" hidden>No dead letters.</p>
    <div class="pager"><button id="dl-first">First page</button><button id="dl-next">Next page</button> <span id="dl-total"></span></div>
  </section>
  <section id="view-event-server" class="view" hidden><div id="event-server"></div></section>
  <section id="view-schedules" class="view" hidden><div id="schedules"></div></section>
  <section id="view-traces" class="view" hidden><div id="traces"></div><div id="waterfall"></div></section>
</main>
<dialog id="confirm"><form method="dialog"><p id="confirm-text"></p><button value="cancel">Cancel</button> <button id="confirm-ok" value="ok" class="danger">Discard</button></form></dialog>
</body>
</html>
`;
}

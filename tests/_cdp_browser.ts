/**
 * A minimal headless Chromium driver over the DevTools protocol (no npm package): launch,
 * open a page, evaluate expressions, take a screenshot, close. Used by browser tests.
 *
 * @module
 */

const CHROMIUM = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";

interface Pending {
  resolve(value: Record<string, unknown>): void;
  reject(error: Error): void;
}

/** A DevTools protocol connection (browser target, flat sessions). */
class Connection {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, Pending>();
  readonly closed: Promise<void>;
  #next = 1;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (e) => {
      const msg = JSON.parse(e.data);
      const waiter = msg.id !== undefined ? this.#pending.get(msg.id) : undefined;
      if (!waiter) return;
      this.#pending.delete(msg.id);
      if (msg.error) waiter.reject(new Error(`CDP: ${msg.error.message}`));
      else waiter.resolve(msg.result ?? {});
    };
    this.closed = new Promise((resolve) => {
      socket.onclose = () => {
        for (const w of this.#pending.values()) w.reject(new Error("CDP connection closed"));
        this.#pending.clear();
        resolve();
      };
    });
  }

  static async open(url: string): Promise<Connection> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error(`Cannot connect to ${url}`));
    });
    return new Connection(socket);
  }

  send(
    method: string,
    params: Record<string, unknown> = {},
    sessionId?: string,
  ): Promise<Record<string, unknown>> {
    const id = this.#next++;
    this.#socket.send(JSON.stringify({ id, method, params, sessionId }));
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
  }

  async close(): Promise<void> {
    if (this.#socket.readyState === WebSocket.OPEN) this.#socket.close();
    await this.closed;
  }
}

/** A page (tab) of the browser. */
export class Page {
  constructor(readonly connection: Connection, readonly sessionId: string) {}

  /** Evaluates an expression in the page (promises are awaited) and returns its JSON value. */
  async evaluate<T = unknown>(expression: string): Promise<T> {
    const r = await this.connection.send("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
    }, this.sessionId);
    const details = r.exceptionDetails as { text?: string; exception?: { description?: string } };
    if (details) {
      throw new Error(`Page error: ${details.exception?.description ?? details.text}`);
    }
    return (r.result as { value: T }).value;
  }

  /** Polls `expression` until it is truthy (every 50 ms, up to `timeoutMs`, 30 s by default). */
  async waitFor<T = unknown>(expression: string, what: string, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await this.evaluate<T>(expression).catch(() => undefined);
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** A PNG screenshot of the viewport. */
  async screenshot(): Promise<Uint8Array> {
    const r = await this.connection.send(
      "Page.captureScreenshot",
      { format: "png" },
      this.sessionId,
    );
    return Uint8Array.from(atob(r.data as string), (c) => c.charCodeAt(0));
  }
}

/** A headless Chromium process. */
export class Browser {
  private constructor(
    readonly process: Deno.ChildProcess,
    readonly connection: Connection,
    readonly profile: string,
    readonly stderr: Promise<void>,
  ) {}

  /** Starts headless Chromium with a throw-away profile. */
  static async launch(): Promise<Browser> {
    const profile = await Deno.makeTempDir({ prefix: "fw-chromium-" });
    const process = new Deno.Command(CHROMIUM, {
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-quic",
        "--no-first-run",
        "--disable-sync",
        "--disable-dev-shm-usage",
        `--user-data-dir=${profile}`,
        "--remote-debugging-port=0",
        "--window-size=1100,800",
        "about:blank",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const lines = process.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let url: string | undefined;
    while (url === undefined) {
      const { value, done } = await lines.read();
      if (done) throw new Error(`Chromium exited before listening:\n${buffer.slice(-2000)}`);
      buffer += value;
      url = /DevTools listening on (ws:\/\/\S+)/.exec(buffer)?.[1];
    }
    const stderr = (async () => {
      while (!(await lines.read()).done) { /* drain */ }
    })();
    const connection = await Connection.open(url);
    return new Browser(process, connection, profile, stderr);
  }

  /**
   * Opens a new tab at `url` and waits for its load event. `initScript` runs in every document of
   * the tab before its own scripts (to record errors or policy violations, for example).
   */
  async open(url: string, initScript?: string): Promise<Page> {
    const { targetId } = await this.connection.send("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await this.connection.send("Target.attachToTarget", {
      targetId,
      flatten: true,
    });
    const page = new Page(this.connection, sessionId as string);
    await this.connection.send("Page.enable", {}, page.sessionId);
    if (initScript !== undefined) {
      await this.connection.send(
        "Page.addScriptToEvaluateOnNewDocument",
        { source: initScript },
        page.sessionId,
      );
    }
    await this.connection.send("Page.navigate", { url }, page.sessionId);
    await page.waitFor("document.readyState === 'complete'", `the page ${url} to load`);
    return page;
  }

  /** Closes the browser and removes its profile. */
  async close(): Promise<void> {
    await this.connection.send("Browser.close").catch(() => {});
    await this.connection.close();
    const timer = setTimeout(() => this.process.kill("SIGKILL"), 5000);
    await this.process.status;
    clearTimeout(timer);
    await this.stderr;
    await Deno.remove(this.profile, { recursive: true }).catch(() => {});
  }
}

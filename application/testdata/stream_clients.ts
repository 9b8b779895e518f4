/**
 * Test clients for stream endpoints: an SSE event reader over `fetch`, a WebSocket wrapper that
 * queues messages and the close event, and a raw TCP client that never reads.
 *
 * @module
 */

/** One parsed SSE event (or comment). */
export interface ReceivedEvent {
  /** `id:` field. */
  id?: string;
  /** `event:` field. */
  event?: string;
  /** Data lines joined with `\n`. */
  data?: string;
  /** The comment text, for a comment-only block. */
  comment?: string;
}

/** Reads SSE events from a response body. */
export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";
  #events: ReceivedEvent[] = [];

  constructor(res: Response) {
    this.#reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next event or comment; undefined at the end of the stream. */
  async next(): Promise<ReceivedEvent | undefined> {
    while (this.#events.length === 0) {
      const { value, done } = await this.#reader.read();
      if (done) return undefined;
      this.#buffer += value;
      let end: number;
      while ((end = this.#buffer.indexOf("\n\n")) >= 0) {
        const block = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const event: ReceivedEvent = {};
        for (const line of block.split("\n")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "") event.comment = value;
          else if (field === "data") {
            event.data = event.data === undefined ? value : `${event.data}\n${value}`;
          } else if (field === "id") event.id = value;
          else if (field === "event") event.event = value;
        }
        this.#events.push(event);
      }
    }
    return this.#events.shift();
  }

  /** The next event with data (comments and `retry:`-only blocks are skipped). */
  async nextEvent(): Promise<ReceivedEvent | undefined> {
    for (;;) {
      const e = await this.next();
      if (e === undefined || e.data !== undefined) return e;
    }
  }

  /** Stops reading (the client disconnects). */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

/** A WebSocket client that queues what it receives. */
export class WsClient {
  readonly socket: WebSocket;
  readonly closed: Promise<CloseEvent>;
  #messages: string[] = [];
  #waiting: ((value: string | undefined) => void) | undefined;
  #done = false;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.onmessage = (e) => {
      const data = typeof e.data === "string" ? e.data : "<binary>";
      if (this.#waiting) {
        const w = this.#waiting;
        this.#waiting = undefined;
        w(data);
      } else this.#messages.push(data);
    };
    this.closed = new Promise((resolve) => {
      socket.onclose = (e) => {
        this.#done = true;
        this.#waiting?.(undefined);
        this.#waiting = undefined;
        resolve(e);
      };
    });
  }

  /** Connects and waits for the open event (rejects when the upgrade is refused). */
  static async connect(
    url: string,
    protocols?: string[],
    headers?: Record<string, string>,
  ): Promise<WsClient> {
    // Deno's WebSocket takes request headers as an extension of the standard constructor
    const socket = headers === undefined
      ? new WebSocket(url, protocols)
      : new WebSocket(url, { protocols, headers } as unknown as string[]);
    const client = new WsClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = (e) => reject(new Error(`WebSocket failed: ${(e as ErrorEvent).message}`));
    });
    socket.onerror = () => {};
    return client;
  }

  /** Sends a value as JSON. */
  send(value: unknown): void {
    this.socket.send(JSON.stringify(value));
  }

  /** The next text message, or undefined once closed. */
  next(): Promise<string | undefined> {
    if (this.#messages.length > 0) return Promise.resolve(this.#messages.shift());
    if (this.#done) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiting = resolve);
  }

  /** The next message parsed as JSON. */
  async json(): Promise<unknown> {
    const text = await this.next();
    return text === undefined ? undefined : JSON.parse(text);
  }

  /** Every remaining message (parsed) and the close event. */
  async rest(): Promise<{ messages: unknown[]; code: number; reason: string }> {
    const messages: unknown[] = [];
    for (;;) {
      const text = await this.next();
      if (text === undefined) break;
      messages.push(JSON.parse(text));
    }
    const e = await this.closed;
    return { messages, code: e.code, reason: e.reason };
  }

  /** Closes and waits for the close event. */
  async close(code = 1000): Promise<CloseEvent> {
    this.socket.close(code);
    return await this.closed;
  }
}

/**
 * Opens a raw TCP connection, sends an HTTP request head and never reads: a client that stalls.
 */
export async function stalledClient(port: number, head: string): Promise<Deno.TcpConn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(head));
  return conn;
}

/**
 * Sends a WebSocket upgrade request over raw TCP and returns the status and headers of the
 * answer (so a refused upgrade shows its HTTP status), then closes the connection.
 */
export async function rawUpgrade(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; head: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const lines = [
      `GET ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
      "Sec-WebSocket-Version: 13",
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    await conn.write(new TextEncoder().encode(`${lines.join("\r\n")}\r\n\r\n`));
    let head = "";
    const buf = new Uint8Array(4096);
    while (!head.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) break;
      head += new TextDecoder().decode(buf.subarray(0, n));
    }
    return { status: Number(head.split(" ")[1]), head: head.split("\r\n\r\n")[0].toLowerCase() };
  } finally {
    conn.close();
  }
}

/** Waits until `check()` is true, yielding to the event loop between tries (no fixed sleeps). */
export async function until(check: () => boolean, what: string, tries = 2000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

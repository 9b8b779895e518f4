/**
 * The load generator of `scripts/bench_streams.ts`: opens many SSE or WebSocket connections over
 * raw TCP (cheap enough to hold 10,000 from one process) and counts the messages they receive
 * (SSE events end with a blank line; WebSocket text frames are parsed from their headers).
 *
 * Run as `deno run -A scripts/_bench_streams_client.ts <sse|ws> <port> <path> <connections>`.
 * Prints `{"open": n, "failed": n, "ms": t}` once connected, then answers `count` on stdin with
 * `{"count": messages, "open": n}`.
 *
 * @module
 */

const [kind, portArg, path, countArg] = Deno.args;
const port = Number(portArg);
const total = Number(countArg);
const encoder = new TextEncoder();
const head = encoder.encode(
  kind === "ws"
    ? `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    : `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`,
);

let messages = 0;
let open = 0;
let failed = 0;

/** Counts SSE events: blank lines, also across reads. */
function sseCounter(): (bytes: Uint8Array, n: number) => void {
  let prev = 0;
  return (bytes, n) => {
    for (let i = 0; i < n; i++) {
      const b = bytes[i];
      if (b === 10 && prev === 10) messages++;
      prev = b;
    }
  };
}

/** Counts WebSocket text frames by walking frame headers (server frames are unmasked). */
function wsCounter(): (bytes: Uint8Array, n: number) => void {
  let need = 0; // payload bytes still to skip
  let header: number[] = [];
  return (bytes, n) => {
    let i = 0;
    while (i < n) {
      if (need > 0) {
        const take = Math.min(need, n - i);
        need -= take;
        i += take;
        continue;
      }
      header.push(bytes[i++]);
      if (header.length < 2) continue;
      const len7 = header[1] & 0x7f;
      const size = len7 === 126 ? 4 : len7 === 127 ? 10 : 2;
      if (header.length < size) continue;
      let len = len7;
      if (len7 === 126) len = (header[2] << 8) | header[3];
      else if (len7 === 127) {
        len = 0;
        for (let k = 2; k < 10; k++) len = len * 256 + header[k];
      }
      if ((header[0] & 0x0f) === 1) messages++;
      need = len;
      header = [];
    }
  };
}

async function connection(): Promise<void> {
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(head);
  } catch {
    failed++;
    return;
  }
  const buffer = new Uint8Array(16 * 1024);
  // Response head: read until the blank line, then count what follows it.
  let headText = "";
  let rest: Uint8Array | undefined;
  while (rest === undefined) {
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) {
      failed++;
      return;
    }
    headText += new TextDecoder().decode(buffer.subarray(0, n));
    const end = headText.indexOf("\r\n\r\n");
    if (end >= 0) rest = encoder.encode(headText.slice(end + 4));
  }
  const ok = kind === "ws"
    ? headText.startsWith("HTTP/1.1 101")
    : headText.startsWith("HTTP/1.1 200");
  if (!ok) {
    failed++;
    conn.close();
    return;
  }
  open++;
  const count = kind === "ws" ? wsCounter() : sseCounter();
  count(rest, rest.length);
  void (async () => {
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      count(buffer, n);
    }
    open--;
  })();
}

const started = performance.now();
const batch = 250;
for (let i = 0; i < total; i += batch) {
  await Promise.all(Array.from({ length: Math.min(batch, total - i) }, connection));
}
console.log(JSON.stringify({ open, failed, ms: Math.round(performance.now() - started) }));

let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffered += chunk;
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const command = buffered.slice(0, nl).trim();
    buffered = buffered.slice(nl + 1);
    if (command === "count") console.log(JSON.stringify({ count: messages, open }));
    if (command === "exit") Deno.exit(0);
  }
}

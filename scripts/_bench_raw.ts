/**
 * Raw-TCP pieces the load generators of `bench:streams` share (`_bench_streams_client.ts`,
 * `_bench_eventserver_client.ts`): the request head of a WebSocket upgrade, the read of the
 * response head, and a walker over server WebSocket frames. Raw sockets keep 10,000 connections
 * cheap enough for one process.
 *
 * @module
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The request head of a WebSocket upgrade of `path`.
 *
 * @param path The request path.
 * @returns The bytes to write.
 */
export function upgradeHead(path: string): Uint8Array {
  return encoder.encode(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
}

/** An open connection whose response head was read. */
export interface RawConnection {
  readonly conn: Deno.TcpConn;
  /** Bytes that came after the response head in the same reads. */
  readonly rest: Uint8Array;
  /** A read buffer for the connection's further reads. */
  readonly buffer: Uint8Array;
}

/**
 * Connects, writes `head`, and reads the response head.
 *
 * @param port The server's port on 127.0.0.1.
 * @param head The request head.
 * @param status The status line's start that counts as accepted (`HTTP/1.1 101`).
 * @returns The connection, or `undefined` when it failed or answered another status (closed).
 */
export async function openRaw(
  port: number,
  head: Uint8Array,
  status: string,
): Promise<RawConnection | undefined> {
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(head);
  } catch {
    return undefined;
  }
  const buffer = new Uint8Array(16 * 1024);
  let headText = "";
  for (;;) {
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) return undefined;
    headText += decoder.decode(buffer.subarray(0, n));
    const end = headText.indexOf("\r\n\r\n");
    if (end < 0) continue;
    if (!headText.startsWith(status)) {
      conn.close();
      return undefined;
    }
    return { conn, rest: encoder.encode(headText.slice(end + 4)), buffer };
  }
}

/**
 * Walks server WebSocket frames (unmasked) across reads. `onFrame()` is called for each text
 * frame; when it returns true, the frame's payload is collected and handed to `onText`.
 *
 * @param onFrame Called per text frame; true asks for its payload.
 * @param onText Receives the payloads asked for.
 * @returns The function to feed each read's bytes to.
 */
export function wsTextFrames(
  onFrame: () => boolean,
  onText: (text: string) => void = () => {},
): (bytes: Uint8Array, n: number) => void {
  let need = 0; // payload bytes still to skip or collect
  let header: number[] = [];
  let collecting: Uint8Array | undefined;
  let at = 0;
  return (bytes, n) => {
    let i = 0;
    while (i < n) {
      if (need > 0) {
        const take = Math.min(need, n - i);
        if (collecting) collecting.set(bytes.subarray(i, i + take), at), at += take;
        need -= take;
        i += take;
        if (need === 0 && collecting) {
          onText(decoder.decode(collecting));
          collecting = undefined;
        }
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
      if ((header[0] & 0x0f) === 1 && onFrame()) {
        if (len === 0) onText("");
        else {
          collecting = new Uint8Array(len);
          at = 0;
        }
      }
      need = len;
      header = [];
    }
  };
}

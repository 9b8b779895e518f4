/**
 * The server of `bench_client.ts`: the typed client's test application on a free port, in its own
 * process so that the server's work does not share the measuring process's thread. Prints
 * `{"port": n}`, then serves until stdin closes.
 *
 * @module
 */

import { clientApp } from "../application/testdata/client_app.ts";

const app = clientApp();
await app.start();
console.log(JSON.stringify({ port: app.address!.port }));
for await (const _ of Deno.stdin.readable) { /* until the parent closes stdin */ }
await app.stop();

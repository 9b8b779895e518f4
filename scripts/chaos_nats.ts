/**
 * `deno task chaos:nats`: the NATS chaos run at full size. A `nats-server -js` of its own (file
 * storage in a temporary directory, a free port) is killed and started again once while the
 * messages flow through `cloudPubSubTransport`; none may be lost.
 *
 * Options: `--messages <n>` (default 10,000).
 *
 * @module
 */

import { runNatsChaos } from "../events/transports/cloud/testdata/nats_chaos.ts";

const i = Deno.args.indexOf("--messages");
const messages = i >= 0 ? Number(Deno.args[i + 1]) : 10_000;
const r = await runNatsChaos(messages, (line) => console.log(line));
console.log(
  `published ${r.published}, handled ${r.handled} distinct in ${r.invocations} invocations, ` +
    `missing ${r.missing.length}, ${(r.elapsedMs / 1000).toFixed(1)} s`,
);
if (r.missing.length > 0) {
  console.error(
    `LOST: ${r.missing.slice(0, 20).join(", ")}${r.missing.length > 20 ? ", ..." : ""}`,
  );
  Deno.exit(1);
}

import assert from "node:assert/strict";
import { Int } from "@fw/runtime";
import { handler } from "../../handler.ts";
import { getPublisher } from "../../publisher.ts";
import { topic } from "../../topic.ts";
import type { SqlClient } from "../../_postgres.ts";
import { until, withPg } from "./testdata/pg_env.ts";

const Reminder = topic("sql.reminder", { id: Int });

type Begin = { begin<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> };

Deno.test("sqlTransport delayed publish in an outbox tx: stored on commit, due later, nothing on rollback", async () => {
  await withPg("delayout", async (track) => {
    const app = await track.admin();
    const sql = app.sql as SqlClient & Begin;
    const bus = track.bus(track.transport({ client: sql }));
    const seen: Array<{ id: number; at: number }> = [];
    await bus.add(
      handler(Reminder).options({ group: "mailer", jitter: 0 }).handle((m) =>
        void seen.push({ id: m.payload.id, at: Date.now() })
      ),
    );
    await bus.start();
    const publish = getPublisher(Reminder, { bus });
    const due = Date.now() + 600;
    await sql.begin(async (tx) => {
      await publish({ id: 1 }, { tx, deliverAt: due });
    });
    await assert.rejects(
      sql.begin(async (tx) => {
        await publish({ id: 2 }, { tx, deliverAt: due });
        throw new Error("payment declined");
      }),
      /payment declined/,
    );
    const stored = await sql.unsafe(
      `SELECT (extract(epoch FROM available_at) * 1000)::float8 AS at FROM "${track.schema}".queue`,
    );
    assert.equal(stored.length, 1, "the committed delayed row is stored at once");
    assert.ok(
      Math.abs((stored[0] as { at: number }).at - due) < 1,
      "its available_at is the due time",
    );
    await until(() => seen.length >= 1, 5000, "the delayed message");
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(seen.map((s) => s.id), [1], "the rolled-back message was never delivered");
    assert.ok(seen[0].at >= due, `came ${due - seen[0].at} ms early`);
  });
});

/**
 * Internal to the NATS JetStream client: the schedule state, in a JetStream key-value bucket
 * (`<stream>_SCHEDULES`, one value per key, created on first use) through npm `@nats-io/kv`, the
 * one module that imports it. One key per schedule (its name in base64url, since KV keys cannot
 * hold every character a name may). The first write is a KV `create` (refused when the key
 * exists), later ones an `update` at the revision read, so exactly one instance moves a
 * schedule's `tick` forward and runs that tick. Both need nothing newer than NATS 2.9.
 *
 * @module
 */

import { type KV, Kvm, type KvOptions } from "@nats-io/kv";
import {
  parseScheduleRecord,
  type ScheduleRecord,
  type ScheduleStore,
  type StoredSchedule,
} from "../../schedule/store.ts";

/** A NATS connection (or JetStream client), as `Kvm` takes it. */
type Connection = ConstructorParameters<typeof Kvm>[0];

/** JetStream's "wrong last sequence": the key changed (or exists) since it was read. */
const WRONG_LAST_SEQUENCE = 10071;

function conflict(err: unknown): boolean {
  const e = err as { code?: unknown; api_error?: { err_code?: number }; message?: string };
  return e?.api_error?.err_code === WRONG_LAST_SEQUENCE || e?.code === WRONG_LAST_SEQUENCE ||
    /wrong last sequence/i.test(String(e?.message));
}

function keyOf(name: string): string {
  const bytes = new TextEncoder().encode(name);
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replaceAll("=", "");
}

/** Schedule state in a NATS key-value bucket. */
export class NatsScheduleStore implements ScheduleStore {
  readonly #nc: () => Promise<Connection>;
  readonly #bucket: string;
  readonly #replicas: number;
  readonly #storage: "file" | "memory";
  #kv: Promise<KV> | undefined;

  /**
   * @param nc The client's connection (opened on first use).
   * @param bucket The bucket name.
   * @param settings The client's storage and replicas.
   */
  constructor(
    nc: () => Promise<Connection>,
    bucket: string,
    settings: { storage: "file" | "memory"; replicas: number },
  ) {
    this.#nc = nc;
    this.#bucket = bucket;
    this.#storage = settings.storage;
    this.#replicas = settings.replicas;
  }

  #open(): Promise<KV> {
    return this.#kv ??= this.#nc().then((nc) => this.#create(new Kvm(nc))).catch((err) => {
      this.#kv = undefined;
      throw new Error(
        `Cannot open the NATS key-value bucket "${this.#bucket}": ${(err as Error).message}`,
        { cause: err },
      );
    });
  }

  /**
   * Creates the bucket, or opens it when it exists. Two instances starting at once both create
   * it; JetStream may refuse the one that loses that race ("subjects overlap with an existing
   * stream") while the other's stream is being set up, so a refused create is tried again: by
   * then the stream exists and the create finds it.
   */
  async #create(kvm: Kvm): Promise<KV> {
    const options = {
      history: 1,
      storage: this.#storage as KvOptions["storage"],
      replicas: this.#replicas,
    };
    return await retried(
      () => kvm.create(this.#bucket, options),
      (err) => /subjects overlap|already in use/i.test(String((err as Error)?.message)),
    );
  }

  /** Deletes the bucket (tests). */
  async drop(): Promise<void> {
    await (await this.#open()).destroy();
    this.#kv = undefined;
  }

  /**
   * Runs an operation on the bucket, again when its stream did not answer: an instance that
   * opens the bucket while another is creating it can find it and publish before the new stream
   * listens ("no responders", which the client reports as "jetstream is not enabled"). Nothing
   * was stored then, so trying again is safe; the fifth failure is thrown.
   */
  async #attempt<T>(operation: (kv: KV) => Promise<T>): Promise<T> {
    const kv = await this.#open();
    return await retried(() => operation(kv), notAnswering);
  }

  async read(name: string): Promise<StoredSchedule | undefined> {
    const entry = await this.#attempt((kv) => kv.get(keyOf(name)));
    if (!entry || entry.operation !== "PUT") return undefined;
    const record = parseScheduleRecord(entry.string()) ?? { since: Date.now(), runs: [] };
    return { record, version: String(entry.revision) };
  }

  async write(
    name: string,
    record: ScheduleRecord,
    version: string | undefined,
  ): Promise<boolean> {
    const json = JSON.stringify(record);
    try {
      await this.#attempt((kv) =>
        version === undefined
          ? kv.create(keyOf(name), json)
          : kv.update(keyOf(name), json, Number(version))
      );
      return true;
    } catch (err) {
      if (conflict(err)) return false;
      throw err;
    }
  }
}

/**
 * Runs an operation up to 5 times, 20 ms x attempt apart, while it fails with an error `transient`
 * accepts (one JetStream is still setting up); the last error, or any other, is thrown.
 */
async function retried<T>(
  operation: () => Promise<T>,
  transient: (err: unknown) => boolean,
): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await operation();
    } catch (err) {
      if (attempt >= 5 || !transient(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

/** Whether an error says the bucket's stream did not answer (see `#attempt`). */
function notAnswering(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (/no responders|jetstream is not enabled/i.test(e.message)) return true;
  }
  return false;
}

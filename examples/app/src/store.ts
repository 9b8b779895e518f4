/**
 * An in-memory user store, provided through dependency injection.
 *
 * @module
 */

import { provider } from "@fw/runtime";

/** A stored user. */
export interface User {
  /** Numeric id. */
  id: number;
  /** Display name. */
  name: string;
  /** Email address. */
  email: string;
  /** Free-form tags. */
  tags: string[];
}

/** The store: a Map with a counter. */
export class UserStore {
  #next = 3;
  readonly users: Map<number, User> = new Map([
    [1, { id: 1, name: "Ada", email: "ada@example.com", tags: ["admin"] }],
    [2, { id: 2, name: "Grace", email: "grace@example.com", tags: [] }],
  ]);

  /** Adds a user and returns it. */
  add(input: Omit<User, "id">): User {
    const user = { id: this.#next++, ...input };
    this.users.set(user.id, user);
    return user;
  }
}

/** One store per application (singleton). */
export const Users = provider({ name: "Users", factory: () => new UserStore() });

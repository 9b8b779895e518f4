import { endpoint, MinLength } from "@fw/application";
import { Users } from "../../store.ts";

/** GET /search/users?q=: a named handler file (`<name>.<method>.ts`). */
export default endpoint()
  .query({ q: MinLength(1) })
  .inject({ users: Users })
  .handle(({ users }, ctx) => {
    const q = ctx.queryParams().q.toLowerCase();
    return [...users.users.values()].filter((u) => u.name.toLowerCase().includes(q));
  });

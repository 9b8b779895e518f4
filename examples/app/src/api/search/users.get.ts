import { ArrayOf, Desc, endpoint, MinLength } from "@fw/application";
import { UserSchema } from "../../schemas.ts";
import { Users } from "../../store.ts";

/** GET /search/users?q=: a named handler file (`<name>.<method>.ts`). */
export default endpoint()
  .description("Finds users whose name contains the query")
  .query({ q: Desc("Part of a name, case-insensitive", MinLength(1)) })
  .returns(ArrayOf(UserSchema))
  .inject({ users: Users })
  .handle(({ users }, ctx) => {
    const q = ctx.queryParams().q.toLowerCase();
    return [...users.users.values()].filter((u) => u.name.toLowerCase().includes(q));
  });

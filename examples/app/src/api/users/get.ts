import { ArrayOf, Desc, endpoint, Int, Max, Min, Optional } from "@fw/application";
import { UserSchema } from "../../schemas.ts";
import { Users } from "../../store.ts";

/** GET /users?limit=: an array, negotiated by Accept (JSON, YAML, XML, HTML). */
export default endpoint()
  .description("Lists users")
  .query({ limit: Optional(Desc("At most this many users (default 100)", Max(100, Min(1, Int)))) })
  .returns(ArrayOf(UserSchema))
  .inject({ users: Users })
  .handle(({ users }, ctx) => [...users.users.values()].slice(0, ctx.queryParams().limit ?? 100));

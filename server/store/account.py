"""A tenant's stored-bytes account in Redis, what its max_stored_bytes caps (keys.py): the expiry of
each member (tenant:<t>:blobs), its size (tenant:<t>:blob-bytes) and their sum (tenant:<t>:stored).
Its members are the tenant's blobs, by digest, and its ended jobs' kept records, as job:<id>
(jobs.FINISH_LUA). A member is released once its expiry has passed, by the next script that reads or
charges the account (blobs.COMMIT_BLOB, jobs.ADMIT_LUA and jobs.FINISH_LUA): each begins with
ACCOUNT_LUA, so the release is one piece of code."""
from __future__ import annotations

from typing import List

from .keys import tenant_key

ACCOUNT_LUA = """
local function release_expired(expiries, sizes, stored, now)
  local expired = redis.call('ZRANGEBYSCORE', expiries, '-inf', now)
  for _, member in ipairs(expired) do
    local size = redis.call('HGET', sizes, member)
    if size then redis.call('DECRBY', stored, size) redis.call('HDEL', sizes, member) end
  end
  if #expired > 0 then redis.call('ZREMRANGEBYSCORE', expiries, '-inf', now) end
end
"""


def account_keys(tenant: str) -> List[str]:
    """The account's keys, in the order release_expired takes them: expiries, sizes, stored total."""
    return [tenant_key(tenant, "blobs"), tenant_key(tenant, "blob-bytes"), tenant_key(tenant, "stored")]

"""`ascrun token NAME`: a new bearer token for a tenant, and its entry for the tenants file (which
keeps only the token's sha256, server/tenants.py)."""
from __future__ import annotations

import argparse
import hashlib
import json
import secrets
from typing import Any

from ..compiler.errors import EXIT_OK


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("token", help="a new bearer token for a tenant, and its entry for the tenants file",
                            description="Print a new random bearer token (give it to the tenant: it is not kept "
                                        "anywhere) and the tenant's entry for the tenants file, which holds only "
                                        "the token's sha256.",
                            epilog="exit codes:\n  0  printed (it never fails)",
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="the tenant's name")
    parser.set_defaults(func=cmd_token)


def cmd_token(opts: argparse.Namespace) -> int:
    token = secrets.token_urlsafe(32)
    entry = {"name": opts.name, "token_sha256": hashlib.sha256(token.encode()).hexdigest()}
    print(f"token: {token}")
    print(f"tenants file entry: {json.dumps(entry)}")
    return EXIT_OK

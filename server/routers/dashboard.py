"""The dashboard: a static page at /dashboard whose scripts read the pool and the caller's jobs
through the API itself, with the caller's token; serving the page needs none and shows no data."""
from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

from ...compiler.errors import Kind
from ..errors import ApiError

PAGE = Path(__file__).resolve().parent.parent / "dashboard"
MEDIA_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
FILES = {path.name for path in PAGE.iterdir() if path.suffix in MEDIA_TYPES}  # nothing else is served
# Only the page's own files run or style it: a kernel's source, log or error is shown as text,
# and this keeps it text should a bug of the page ever write it as HTML.
HEADERS = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
           "Cache-Control": "no-cache"}

router = APIRouter(include_in_schema=False)


@router.get("/dashboard")
def page():
    return FileResponse(PAGE / "index.html", media_type="text/html", headers=HEADERS)


@router.get("/dashboard/{name}")
def page_file(name: str):
    if name not in FILES:
        raise ApiError(Kind.NOT_FOUND, f"the dashboard has no file {name!r}")
    return FileResponse(PAGE / name, media_type=MEDIA_TYPES[Path(name).suffix], headers=HEADERS)

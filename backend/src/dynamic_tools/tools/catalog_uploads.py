"""A catalog document given inline (uploaded or pasted) instead of by path or URL.

An :class:`Upload` is the document's text (``content``) and the other files it names by
relative path (``files``: an Arazzo document's ``./openapi.yaml``...). The catalog service
reads it through an :class:`UploadSource`, which serves those files as if they were in the
catalog's upload directory (``catalogs/<name>.upload/``) and hands every other path or URL to
the real fetcher; so an upload goes the same way as a path import (the same checks, the same
relative reads). Nothing is written until the import succeeds: then the files are stored in
that directory (the catalog's ``source`` points there), replaced on an overwrite and removed
with the catalog.

File names are relative paths (``specs/openapi.yaml``); an absolute one, one with a ``..``
segment, a control character or a backslash is refused (:class:`InvalidInputError` whose
violation names the file: ``files.<name>``).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from dynamic_tools.errors import DocumentSourceError, InvalidInputError
from dynamic_tools.tools.documents import DocumentSource, FetchedDocument, SourceType

__all__ = [
    "DEFAULT_FILENAME",
    "MAX_UPLOAD_FILES",
    "UPLOAD_SUFFIX",
    "Upload",
    "UploadSource",
    "check_upload",
    "remove_upload",
    "store_upload",
]

UPLOAD_SUFFIX = ".upload"
"""A catalog's uploaded files are kept in ``catalogs/<name>.upload/``."""
DEFAULT_FILENAME = "document"
MAX_UPLOAD_FILES = 64
_BAD_CHARACTERS = re.compile(r"[\x00-\x1f\x7f\\]")


@dataclass(frozen=True)
class Upload:
    """A document given inline: its text, its file name, and the files it names (by path)."""

    content: str
    filename: str | None = None
    files: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The document's file name (``document`` when none was given)."""
        return self.filename or DEFAULT_FILENAME


def check_upload(upload: Upload) -> dict[str, bytes]:
    """Every file of ``upload`` by its normalised relative path, the document's first.

    Raises:
        InvalidInputError: a file name that is absolute, has a ``..`` segment, a control
            character or a backslash, or is given twice (after ``./`` is dropped); too many
            files. The violation's path names it (``filename`` or ``files.<name>``).
    """
    if len(upload.files) > MAX_UPLOAD_FILES:
        raise _bad("files", f"at most {MAX_UPLOAD_FILES} files", "maxProperties")
    found = {_clean(upload.name, "filename"): upload.content.encode("utf-8")}
    for name, text in upload.files.items():
        where = f"files.{_shown(name)}"
        clean = _clean(name, where)
        if clean in found:
            raise _bad(where, f"'{clean}' is given twice (or is the document itself)", "unique")
        found[clean] = text.encode("utf-8")
    return found


def _clean(name: str, where: str) -> str:
    """``name`` as a relative POSIX path (``./a/b.yaml`` → ``a/b.yaml``), or a refusal."""
    if not name or not name.strip():
        raise _bad(where, "a file name is required", "required")
    if _BAD_CHARACTERS.search(name):
        raise _bad(where, "a file name has no control characters or backslashes", "file_name")
    path = PurePosixPath(name)
    if path.is_absolute() or re.match(r"^[A-Za-z]:", name):
        raise _bad(where, f"'{_shown(name)}' is absolute: give a path relative to the document")
    parts = [p for p in path.parts if p != "."]
    if ".." in parts:
        raise _bad(where, f"'{_shown(name)}' leaves the document's folder ('..')")
    if not parts:
        raise _bad(where, f"'{_shown(name)}' names no file", "file_name")
    return "/".join(parts)


def _shown(name: str) -> str:
    return name.encode("unicode_escape").decode("ascii")[:200]


def _bad(where: str, message: str, rule: str = "relative_path") -> InvalidInputError:
    return InvalidInputError(
        f"{where}: {message}",
        violations=[{"path": where, "rule": rule, "message": message}],
    )


class UploadSource:
    """A :class:`DocumentSource` serving an upload's files from ``directory``; others pass on.

    A path in ``directory`` that is not one of the files is refused (an earlier upload's
    file there is never read instead).
    """

    def __init__(self, fetcher: DocumentSource, directory: Path, files: Mapping[str, bytes]):
        self.fetcher = fetcher
        self.directory = Path(os.path.normpath(directory.absolute()))
        self.files = dict(files)

    def location(self, name: str) -> str:
        """Where the file ``name`` of the upload is (as the fetched document's location)."""
        return str(self.directory / name)

    async def fetch(self, source: str, source_type: SourceType | None = None) -> FetchedDocument:
        """The uploaded file ``source`` names, or what the real fetcher reads there."""
        text = source.strip()
        is_url = text.lower().startswith(("http://", "https://"))
        if source_type == "url" or is_url:
            return await self.fetcher.fetch(source, source_type)
        raw = unquote(urlsplit(text).path) if text.lower().startswith("file://") else text
        path = Path(raw)
        if not path.is_absolute() or "\x00" in raw:
            return await self.fetcher.fetch(source, source_type)
        path = Path(os.path.normpath(path))
        if not path.is_relative_to(self.directory):
            return await self.fetcher.fetch(source, source_type)
        name = path.relative_to(self.directory).as_posix()
        content = self.files.get(name)
        if content is None:
            message = (
                f"'{name}' is not among the uploaded files ("
                + ", ".join(sorted(self.files))
                + "): add it to the files"
            )
            raise DocumentSourceError(
                message,
                violations=[{"path": "files", "rule": "not_uploaded", "message": message}],
                context={"source": name},
            )
        return FetchedDocument(content, source, "path", str(path))


def store_upload(directory: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` in ``directory``, replacing what was there (a new folder renamed in)."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        for name, content in files.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        old = directory.with_name(f".{directory.name}.old")
        if old.exists():
            shutil.rmtree(old)
        if directory.exists():
            directory.rename(old)
        staging.rename(directory)
        if old.exists():
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def remove_upload(directory: Path) -> None:
    """Delete a catalog's uploaded files (nothing when there are none)."""
    if directory.is_dir():
        shutil.rmtree(directory)

"""Where a sweep's results live: a local folder, or a folder in any filesystem
``pyarrow.fs`` opens from a URI (``s3://bucket/prefix``, ``gs://bucket/prefix``,
``hdfs://...``; ``file:///path`` is a local folder).

A local OUT is a ``pathlib.Path``. A remote one is an ``ArrowPath``:
the few ``pathlib`` methods fbench's results code uses, over a ``pyarrow.fs``
filesystem, so the same code reads and writes both (``Loc`` is either). Object stores
have no rename: a remote file is written whole, from memory, in one upload, and is
visible only once that upload completes (``runner.results.atomic``).

Credentials and endpoints come from where pyarrow reads them: the URI's query
(``s3://bucket/prefix?endpoint_override=host:9000&scheme=http``) or the environment
(``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...).
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import Any, NamedTuple, TypeAlias

import pyarrow as pa
from pyarrow import fs as pafs

from runner.errors import FbenchError

_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class _Stat(NamedTuple):
    st_size: int
    st_mtime_ns: int


@dataclass(frozen=True)
class ArrowPath:
    """A path in a ``pyarrow.fs`` filesystem, with the ``pathlib`` methods fbench uses."""

    fs: pafs.FileSystem
    path: str  # as the filesystem names it (for S3: bucket/key), no trailing "/"
    scheme: str

    def __str__(self) -> str:
        return f"{self.scheme}://{self.path}"

    def __repr__(self) -> str:
        return f"ArrowPath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArrowPath) and (self.scheme, self.path) == (
            other.scheme, other.path)

    def __hash__(self) -> int:
        return hash((self.scheme, self.path))

    def __lt__(self, other: ArrowPath) -> bool:
        return self.path < other.path

    def __truediv__(self, name: str | PurePath) -> ArrowPath:
        name = name.as_posix() if isinstance(name, PurePath) else name
        return ArrowPath(self.fs, f"{self.path}/{name}", self.scheme)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def stem(self) -> str:
        return PurePosixPath(self.name).stem

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.name).suffix

    @property
    def parent(self) -> ArrowPath:
        return ArrowPath(self.fs, self.path.rsplit("/", 1)[0], self.scheme)

    def with_name(self, name: str) -> ArrowPath:
        return self.parent / name

    def with_suffix(self, suffix: str) -> ArrowPath:
        return self.parent / PurePosixPath(self.name).with_suffix(suffix).name

    def relative_to(self, other: ArrowPath) -> PurePosixPath:
        return PurePosixPath(self.path).relative_to(other.path)

    def as_posix(self) -> str:
        return str(self)

    def _info(self) -> pafs.FileInfo:
        return self.fs.get_file_info(self.path)

    def exists(self) -> bool:
        return bool(self._info().type != pafs.FileType.NotFound)

    def is_file(self) -> bool:
        return bool(self._info().type == pafs.FileType.File)

    def is_dir(self) -> bool:
        return bool(self._info().type == pafs.FileType.Directory)

    def stat(self) -> _Stat:
        info = self._info()
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(str(self))
        return _Stat(int(info.size or 0), int(info.mtime_ns or 0))

    def read_bytes(self) -> bytes:
        with self.fs.open_input_stream(self.path) as f:
            return bytes(f.read())

    def read_text(self, encoding: str = "utf-8") -> str:
        return self.read_bytes().decode(encoding)

    def write_bytes(self, data: bytes) -> None:
        """One upload of the whole file: an object store shows it only once complete."""
        with self.fs.open_output_stream(self.path) as f:
            f.write(data)

    def write_text(self, text: str, encoding: str = "utf-8") -> None:
        self.write_bytes(text.encode(encoding))

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            self.fs.delete_file(self.path)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        """Nothing to make: an object store's folders are the prefixes of its keys."""

    def rename(self, target: ArrowPath) -> ArrowPath:
        self.fs.move(self.path, target.path)
        return target

    def _files(self) -> Iterator[ArrowPath]:
        return (p for p, _ in self.files_stat())

    def files_stat(self, recursive: bool = True) -> Iterator[tuple[ArrowPath, _Stat]]:
        """Every file below, at any depth (or right below), with its size and mtime: one
        listing."""
        selector = pafs.FileSelector(self.path, recursive=recursive, allow_not_found=True)
        for info in self.fs.get_file_info(selector):
            if info.type == pafs.FileType.File:
                yield (ArrowPath(self.fs, info.path, self.scheme),
                       _Stat(int(info.size or 0), int(info.mtime_ns or 0)))

    def rglob(self, pattern: str) -> Iterator[ArrowPath]:
        """Files below, at any depth, whose name matches ``pattern``."""
        return (p for p in self._files() if fnmatch.fnmatchcase(p.name, pattern))

    def glob(self, pattern: str) -> Iterator[ArrowPath]:
        """Files below whose path relative to this one matches ``pattern`` (by parts)."""
        want = pattern.split("/")
        for p in self._files():
            rel = p.relative_to(self).parts
            if len(rel) == len(want) and all(map(fnmatch.fnmatchcase, rel, want)):
                yield p

    def iterdir(self) -> Iterator[ArrowPath]:
        selector = pafs.FileSelector(self.path, allow_not_found=True)
        return (ArrowPath(self.fs, i.path, self.scheme) for i in self.fs.get_file_info(selector))


Loc: TypeAlias = Path | ArrowPath


def is_uri(text: str) -> bool:
    """``text`` names a filesystem by scheme (``s3://...``), not a local path."""
    return bool(_URI.match(text))


def location(out: str | Loc) -> Loc:
    """OUT as fbench reads and writes it: a ``Path`` for a local folder (or a
    ``file://`` URI), an ``ArrowPath`` for any other URI ``pyarrow.fs`` opens."""
    if isinstance(out, Path | ArrowPath):
        return out
    match = _URI.match(out)
    if match is None:
        return Path(out)
    try:
        filesystem, path = pafs.FileSystem.from_uri(out)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, OSError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FbenchError(f"cannot open {out!r}: {reason}; give a local folder or a URI "
                          "pyarrow.fs opens (s3://bucket/prefix, gs://bucket/prefix, "
                          "file:///path)") from None
    if isinstance(filesystem, pafs.LocalFileSystem):
        return Path(path)
    return ArrowPath(filesystem, path.rstrip("/"), match.group(1).lower())


def relative(path: Loc, base: Loc) -> PurePosixPath:
    """``path`` relative to ``base`` (both in one OUT), as a posix path."""
    if isinstance(path, ArrowPath) and isinstance(base, ArrowPath):
        return path.relative_to(base)
    if isinstance(path, Path) and isinstance(base, Path):
        return PurePosixPath(path.relative_to(base).as_posix())
    raise ValueError(f"{path} and {base} are not in one filesystem")


def check_remote_out(out: ArrowPath) -> None:
    """A remote OUT must take a write: one small object written and removed, so a missing
    bucket, wrong credentials or an unreachable endpoint fail before anything else."""
    probe = out / f".fbench-probe-{uuid.uuid4().hex}"
    try:
        if out.is_file():
            raise FbenchError(f"--out {str(out)!r} is a file; give a folder (a prefix)")
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = " ".join(str(exc).split())[:300]
        raise FbenchError(f"--out {str(out)!r} cannot be written ({reason}); check the "
                          "bucket, the credentials and the endpoint (AWS_ENDPOINT_URL or "
                          "?endpoint_override=)") from None


def files_stat(root: Loc, recursive: bool = True) -> Iterator[tuple[Loc, _Stat]]:
    """Every file below ``root`` (none if it is missing; not ``recursive``: the files
    right in it) with its size and mtime, in one walk (local: ``os.scandir``) or one
    listing (remote), whose names and folders below ``root`` do not start with "."
    (temporaries); unordered."""
    if isinstance(root, ArrowPath):
        for path, st in root.files_stat(recursive):
            if not any(part.startswith(".") for part in path.relative_to(root).parts):
                yield path, st
        return
    stack = [str(root)]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except (FileNotFoundError, NotADirectoryError):
            continue
        with entries:
            for e in entries:
                if e.name.startswith("."):
                    continue
                if e.is_dir():
                    if recursive:
                        stack.append(e.path)
                elif e.is_file():
                    info = e.stat()
                    yield Path(e.path), _Stat(info.st_size, info.st_mtime_ns)


def subfolders(loc: Loc) -> list[str]:
    """The names of the folders right below ``loc`` (none if it is missing), sorted;
    names that start with "." left out."""
    if isinstance(loc, ArrowPath):
        selector = pafs.FileSelector(loc.path, allow_not_found=True)
        names = [PurePosixPath(i.path).name for i in loc.fs.get_file_info(selector)
                 if i.type == pafs.FileType.Directory]
    else:
        try:
            with os.scandir(loc) as entries:
                names = [e.name for e in entries if e.is_dir()]
        except (FileNotFoundError, NotADirectoryError):
            names = []
    return sorted(n for n in names if not n.startswith("."))


def text_lines(loc: Loc) -> Iterator[str]:
    """A text file's lines as they are read (remote: one streamed download), so a big
    file is never held whole."""
    if isinstance(loc, ArrowPath):
        with loc.fs.open_input_stream(loc.path) as raw:
            yield from io.TextIOWrapper(raw, encoding="utf-8")
        return
    with loc.open("r", encoding="utf-8") as f:
        yield from f


def is_remote(loc: Loc) -> bool:
    return isinstance(loc, ArrowPath)


def arrow_source(loc: Loc) -> Any:
    """What pyarrow's readers take for ``loc``: a path string, or an open remote file."""
    if isinstance(loc, ArrowPath):
        return loc.fs.open_input_file(loc.path)
    return str(loc)


def dataset_source(files: list[Loc]) -> tuple[list[str], pafs.FileSystem | None]:
    """``files`` as ``pyarrow.dataset.dataset`` takes them: paths, and their filesystem
    (``None``: local). Every file of one call is in one OUT, so in one filesystem."""
    remote = [f for f in files if isinstance(f, ArrowPath)]
    if not remote:
        return [str(f) for f in files], None
    return [f.path for f in remote], remote[0].fs

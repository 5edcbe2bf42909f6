"""A shorter server start: the code attrs generates for lsprotocol's classes, cached.

pygls needs ``lsprotocol.types``, which defines about 570 attrs classes. For
each, attrs writes ``__init__``, ``__eq__``, ``__repr__``... as source text and
``compile``\\ s it: about half of that import (0.2 s of 0.4 s here, measured with
``python -X importtime``). A compiled code object depends only on its source
text, file name and the Python version, so :func:`install` keeps them in
``<mdseek cache>/attrs-code-<python bytecode magic>.marshal``, keyed by a hash
of those, and hands attrs the stored object when the same text comes again.
Text not in the file is compiled as before; when something was new the file is
rewritten once, by :func:`finish`, with what this start used (so it does not
grow across upgrades). A missing, damaged or foreign file only means compiling.
The code it holds is run, so it is read only from a folder private to this user
(:mod:`mdseek.index.model.private`: owned by them, writable by nobody else, no
symlink; ``MDSEEK_CACHE_DIR`` may point anywhere) -- else it is not used, with
one log line.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib.util
import logging
import marshal
import os
import types
from pathlib import Path

from mdseek.index.api import why_not_private

log = logging.getLogger(__name__)


class CodeCache:
    def __init__(self, path: Path):
        self.path = path
        self.codes: dict[bytes, types.CodeType] = {}
        self.used: dict[bytes, types.CodeType] = {}
        self.new = 0
        data = None
        try:
            # O_NOFOLLOW and fstat: the file checked is the file read.
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if hasattr(os, "getuid") and st.st_uid != os.getuid() or st.st_mode & 0o022:
                    log.warning("attrs code cache %s ignored: not private to this user", path)
                else:
                    data = marshal.loads(f.read())
        except FileNotFoundError:
            pass
        except (OSError, EOFError, ValueError, TypeError) as exc:
            log.debug("attrs code cache not read: %s", exc)
        if isinstance(data, dict):
            self.codes = {
                k: v for k, v in data.items() if isinstance(k, bytes) and type(v) is types.CodeType
            }

    def compile(self, source, filename, mode, *args, **kw):  # builtins.compile's signature
        if args or kw or not isinstance(source, str) or not isinstance(filename, str):
            return builtins.compile(source, filename, mode, *args, **kw)
        key = hashlib.blake2b(f"{mode}\0{filename}\0{source}".encode(), digest_size=16).digest()
        code = self.codes.get(key)
        if code is None:
            code = self.codes[key] = builtins.compile(source, filename, mode)
            self.new += 1
        self.used[key] = code
        return code

    def save(self) -> None:
        if not self.new:
            return
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(marshal.dumps(self.used))
            os.replace(tmp, self.path)  # atomic: a concurrent start reads the old or the new file
        except OSError as exc:
            log.debug("attrs code cache not written: %s", exc)
            tmp.unlink(missing_ok=True)
        self.new = 0


_active: CodeCache | None = None


def install(cache_dir: Path) -> CodeCache | None:
    """Serve attrs' ``compile`` calls from the cache until :func:`finish`."""
    global _active
    try:
        import attr._make as make
    except ImportError:
        return None
    if _active is not None or "compile" in vars(make):
        return _active  # installed already, or attrs has a compile of its own
    if why := why_not_private(cache_dir):
        log.warning("attrs code cache not used: %s", why)  # compiling as usual
        return None
    _active = CodeCache(cache_dir / f"attrs-code-{importlib.util.MAGIC_NUMBER.hex()}.marshal")
    make.compile = _active.compile  # type: ignore[attr-defined]  # a module global shadows the builtin for attrs' code only
    return _active


def finish() -> None:
    """Give attrs the builtin ``compile`` back and store what was new."""
    global _active
    cache, _active = _active, None
    if cache is None:
        return
    import attr._make as make

    vars(make).pop("compile", None)
    cache.save()

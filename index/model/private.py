"""Whether a folder of the user cache may be trusted with what mdseek runs or
loads from it (marshal'd code, an exported model).

Everything such a folder holds is executed or loaded as it is, so it must be
private to this user: owned by them, writable by nobody else, and reached
through no symlink (a workspace, a setting or another user could otherwise
choose the code). A folder that does not exist yet is fine: mdseek makes it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def why_not_private(path: Path, top: Path | None = None) -> str | None:
    """Why ``path`` (a folder or file), and every folder between ``top`` and it,
    cannot be trusted: one line, or None when they can."""
    path = Path(os.path.abspath(path))
    chain = [path]
    if top is not None and path.is_relative_to(top := Path(os.path.abspath(top))):
        parts = path.relative_to(top).parts
        chain = [top.joinpath(*parts[:i]) for i in range(len(parts) + 1)]
    for p in chain:
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return None  # made by mdseek from here down
        except OSError as exc:
            return f"{p} cannot be checked ({exc.strerror or exc})"
        if stat.S_ISLNK(st.st_mode):
            return f"{p} is a symlink"
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            return f"{p} is owned by another user"
        if st.st_mode & 0o022:
            return f"{p} is writable by other users"
    try:
        if chain[0].resolve() != chain[0]:
            return f"{chain[0]} is reached through a symlink"
    except (OSError, RuntimeError) as exc:
        return f"{chain[0]} cannot be resolved ({exc})"
    return None

"""Front matter: its YAML read into a dict (invalid YAML warned about and
ignored), and the note's title when it names one.
"""

from __future__ import annotations

import logging
import re

from .document import ParsedDocument

log = logging.getLogger(__name__)

_SURROGATE = re.compile("[\ud800-\udfff]")


def front_matter_title(content: str, path: str) -> tuple[dict[str, object], str | None]:
    """The front matter's mapping (empty unless it is YAML and a mapping) and
    the title it names, if any (``path`` is for the warning)."""
    import yaml

    try:
        data = yaml.safe_load(content)
    except Exception as exc:  # YAMLError, or a RecursionError on absurd nesting
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        log.warning("%s: front matter is not valid YAML (%s); ignoring it", path, reason)
        return {}, None
    if not isinstance(data, dict):
        return {}, None
    title = data.get("title")
    if isinstance(title, (str, int, float)) and str(title).strip():
        # YAML escapes can spell a lone surrogate ("\ud800"), which no encoder takes.
        return data, _SURROGATE.sub("\ufffd", str(title).strip())
    return data, None


def has_front_matter_title(doc: ParsedDocument) -> bool:
    """Whether ``doc``'s front matter names a title (then it is the document's title)."""
    t = doc.front_matter.get("title")
    return isinstance(t, (str, int, float)) and bool(str(t).strip())

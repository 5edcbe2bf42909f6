"""A benchmark's result said once: printed as JSON, and written to ``--json`` when given."""

from __future__ import annotations

import json
from pathlib import Path


def emit(result: dict, path: Path | None) -> int:
    """Print ``result`` (indented JSON) and write it to ``path`` if set; 0, the exit status."""
    text = json.dumps(result, indent=2)
    if path:
        path.write_text(text)
    print(text)
    return 0

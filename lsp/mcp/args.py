"""The MCP tools' arguments, checked in mdseek's words before the SDK sees them.

The SDK validates a tool's arguments with pydantic and answers a wrong one with
pydantic's text. :class:`CheckedServer` runs each tool's own checks
(:mod:`mdseek.index.search.requests`, the CLI's and language server's words) on the
raw arguments first, so a wrong type, a missing argument or an unknown name is
one plain line; the SDK then validates clean values only. It also answers a
tool's own :class:`ToolError` without the SDK's "Error executing tool" prefix.

Owns: argument checking and error text of MCP tool calls. Imports nothing of
mdseek but :mod:`mdseek.index.search.requests`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

from mdseek.index.api import requests

Check = Callable[[Any], Any]
F = TypeVar("F", bound=Callable[..., Any])


class ToolArguments:
    """One tool's argument checks (name -> check of the raw value, returning the
    clean one or raising :class:`~mdseek.index.search.requests.BadRequest`)."""

    def __init__(self, tool: str, checks: dict[str, Check], required: set[str]):
        self.tool, self.checks, self.required = tool, checks, required

    def clean(self, arguments: dict[str, Any]) -> dict[str, Any]:
        for name in arguments:
            if name not in self.checks:
                raise requests.unknown_argument(name, self.tool, self.checks)
        out = {}
        for name, check in self.checks.items():
            value = arguments.get(name)
            if value is None and name not in self.required:
                continue  # left out or null: the default
            out[name] = check(value)
        return out


class CheckedServer(MCPServer):
    """An MCP server whose tools (registered with :meth:`checked_tool`) answer
    every argument mistake, and every error they raise, in one plain line."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.arguments: dict[str, ToolArguments] = {}

    def checked_tool(self, **checks: Check) -> Callable[[F], F]:
        """``@server.checked_tool(arg=check, ...)``: a tool with one check per argument."""

        def register(fn: F) -> F:
            params = inspect.signature(fn).parameters
            if set(params) != set(checks):
                raise TypeError(f"{fn.__name__}: give one check per argument ({', '.join(params)})")
            required = {n for n, p in params.items() if p.default is inspect.Parameter.empty}
            self.arguments[fn.__name__] = ToolArguments(fn.__name__, dict(checks), required)
            return self.tool()(fn)

        return register

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        spec = self.arguments.get(name)
        if spec is not None:
            try:
                arguments = spec.clean(arguments)
            except requests.BadRequest as exc:
                raise ToolError(str(exc)) from None
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            # The SDK puts "Error executing tool NAME: " before a tool's own message.
            if isinstance(exc.__cause__, ToolError):
                raise ToolError(str(exc.__cause__)) from exc.__cause__
            raise


def flag(name: str) -> Check:
    """The check of a yes/no argument."""
    return lambda value: requests.check_flag(name, value)


def globs(value: Any) -> list[str]:
    """Path globs: one text or a list (a list sent as JSON text too, as some
    clients do)."""
    return list(requests.check_globs(_listed(value)))


def _listed(value: Any) -> Any:
    """A list sent as JSON text (as some clients do) read as a list."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return parsed
    return value


def tags(value: Any) -> list[str]:
    """Tags a note must have: one text or a list (``runbook``, ``#area/sub``)."""
    return list(requests.check_filter(tag=_listed(value)).tags)


def where(value: Any) -> list[str]:
    """Front-matter terms a note must pass: one text or a list (``status=published``)."""
    value = _listed(value)
    requests.check_filter(where=value)  # the filter's own words for a bad term
    return [value] if isinstance(value, str) else list(value)

"""A request's or a folder's end: :class:`Cancelled`, raised by work that is
no longer wanted, and the :class:`CancelToken` a front end sets for a
superseded request."""

from __future__ import annotations


class Cancelled(Exception):
    """The work was for a request that is cancelled, or a folder that is closing."""


class CancelToken:
    def __init__(self) -> None:
        self.cancelled = False

    def check(self) -> None:
        if self.cancelled:
            raise Cancelled()

"""The ported peer cases: assertion messages from the shared helper show both sides."""

import pytest

pytest.register_assert_rewrite("peer_support")

"""The language server (``mdseek serve``): :mod:`.app` is its handler table and
``run``; the other modules are its features and what they share."""

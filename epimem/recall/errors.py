"""The errors of the recall index (the query's own is `rank.QueryError`, the model's `embed.EmbedderError`)."""

from __future__ import annotations

from ..core.errors import EpimemError


class RecallIndexError(EpimemError):
    """The index cannot be used or built; the message says why."""


class Corrupt(RecallIndexError):
    """The index files are missing pieces or unreadable: rebuild."""

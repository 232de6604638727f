"""epimem: a personal epistemic memory for AI assistants.

    import epimem
    mem = epimem.open()            # --vault, $EPIMEM_VAULT or the user data dir
    mem.observe([...]); mem.beliefs(min_confidence=0.5); mem.history("some-id")

Attributes are imported on first use, so `import epimem.claude.hook` (the
session-start path) does not pay for the API it does not need.
"""

__version__ = "0.1.0"

__all__ = ["open", "init", "Memory", "Filters", "EpimemError"]


def __getattr__(name: str):
    if name == "EpimemError":
        from .core.errors import EpimemError

        return EpimemError
    if name in ("open", "Memory", "Filters"):
        from .api import memory

        return getattr(memory, name)
    if name == "init":
        from .api.memory import Memory

        return lambda path=None, today=None: Memory.init(path, today)[0]
    raise AttributeError(f"module 'epimem' has no attribute {name!r}")

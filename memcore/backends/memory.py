"""memory: the default backend. Nothing is persisted: the store's columns and its
in-memory ``ForgetLog`` are the whole record, and every hook is a no-op (the hot
path pays one empty method call per add and tick)."""

from __future__ import annotations

from memcore.backends.base import Backend, register_backend


class MemoryBackend(Backend):
    name = "memory"


@register_backend("memory")
def memory_backend(path: str, reopen: bool) -> Backend:
    if path:
        raise ValueError(f"the memory backend keeps no file; got path {path!r} "
                         f"(use backend 'sqlite')")
    if reopen:
        raise ValueError("the memory backend cannot reopen a store (use backend 'sqlite')")
    return MemoryBackend()

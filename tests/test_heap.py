"""system/heap.py: freed memory that glibc kept goes back to the system when asked."""

from __future__ import annotations

import psutil
import pytest

from app.system import heap


@pytest.mark.skipif(heap._trim is None, reason="not glibc: nothing to trim")
def test_trim_returns_memory_freed_between_live_allocations() -> None:
    """150 MB freed in the middle of the heap (every other 100 kB block, each freed one between
    two that stay, as a long-running app's heap is) stays in the process until `trim()`. The
    blocks that stay are as large as the freed ones: small fences would come from Python's own
    allocator or from holes elsewhere in glibc's heap, and the freed blocks would then join into
    a free top that glibc gives back by itself."""
    proc = psutil.Process()
    blocks = [bytearray(100_000) for _ in range(3000)]  # under glibc's mmap threshold: the heap
    held = proc.memory_info().rss
    del blocks[::2]
    kept = proc.memory_info().rss
    assert held - kept < 50 * 2**20  # freed, but glibc kept it
    heap.trim()
    assert kept - proc.memory_info().rss > 100 * 2**20
    del blocks

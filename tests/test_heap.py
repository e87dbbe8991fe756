"""system/heap.py: freed memory that glibc kept goes back to the system when asked."""

from __future__ import annotations

import psutil
import pytest

from app.system import heap


@pytest.mark.skipif(heap._trim is None, reason="not glibc: nothing to trim")
def test_trim_returns_memory_freed_between_live_allocations() -> None:
    """200 MB freed in the middle of the heap (each block fenced by a small one that stays, as
    a long-running app's heap is) stays in the process until `trim()`."""
    proc = psutil.Process()
    big, fences = [], []
    for _ in range(2000):
        big.append(bytearray(100_000))  # under glibc's mmap threshold: from the heap
        fences.append(bytearray(200))
    held = proc.memory_info().rss
    del big
    kept = proc.memory_info().rss
    assert held - kept < 100 * 2**20  # freed, but glibc kept it
    heap.trim()
    assert kept - proc.memory_info().rss > 100 * 2**20
    del fences

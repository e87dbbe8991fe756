"""A queue for the Speaker's two threads where an item can go ahead of those waiting (but after
earlier ones that did): an announcement is said right after the sentence playing, ahead of the
rest of a reply. Any thread may put and get.
"""

from __future__ import annotations

import collections
import queue
import threading
from typing import Generic, TypeVar

T = TypeVar("T")


class Lane(Generic[T]):
    """A FIFO queue where an item put `first` goes ahead of all that wait (after earlier
    `first` ones): an announcement is said after the sentence playing, not after the reply."""

    def __init__(self) -> None:
        self._items: collections.deque[T] = collections.deque()
        self._ahead = 0  # how many of the items at the front were put first
        self._cv = threading.Condition()

    def put(self, item: T, first: bool = False) -> None:
        with self._cv:
            if first:
                self._items.insert(self._ahead, item)
                self._ahead += 1
            else:
                self._items.append(item)
            self._cv.notify()

    def get(self, timeout: float | None = None) -> T:
        with self._cv:
            if not self._cv.wait_for(lambda: bool(self._items), timeout):
                raise queue.Empty
            return self._take()

    def get_nowait(self) -> T:
        with self._cv:
            if not self._items:
                raise queue.Empty
            return self._take()

    def _take(self) -> T:
        self._ahead = max(0, self._ahead - 1)
        return self._items.popleft()

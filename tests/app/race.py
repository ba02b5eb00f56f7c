"""Races on purpose: N threads released at the same moment by one barrier (issue #31).

``race(8, lambda i: client[i].post(...))`` starts eight threads, each waits at one
:class:`threading.Barrier` until all eight are ready, then runs its action; the results come back
in thread order. An action's exception is raised again after every thread ended, so a test
never passes because a thread died unseen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def race(n: int, action: Callable[[int], T], *, timeout: float = 60.0) -> list[T]:
    """``[action(0), ..., action(n - 1)]``, each run in its own thread, all started at once."""
    barrier = threading.Barrier(n, timeout=timeout)
    results: dict[int, T] = {}
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = action(i)
        except BaseException as error:  # noqa: BLE001  (raised again below)
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,), name=f"race-{i}") for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    if any(thread.is_alive() for thread in threads):
        raise TimeoutError(f"a racing thread did not end within {timeout:g} s")
    if errors:
        raise errors[0]
    return [results[i] for i in range(n)]  # every action returned: no error was raised

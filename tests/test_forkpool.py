"""kwire.forkpool: forked workers fed through pipes. Results come back whole and in order even when
tasks and results are bigger than the pipes (the parent reads while it writes, so a worker blocked
on its result cannot deadlock a parent blocked on its task); a task that raises, a worker that dies
and a pool closed with work still out are each told, never hung on."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from kwire.forkpool import ForkPool, WorkerDied


def echo_big(task):
    n, size = task
    return n, bytes([n % 251]) * size


def raise_on_three(n):
    if n == 3:
        raise ValueError("three")
    return n * 2


def die_on_five(n):
    if n == 5:
        os._exit(3)
    return n


def sleep_long(n):
    import time

    time.sleep(60)


@pytest.fixture
def pools():
    made = []

    def make(jobs, work):
        pool = ForkPool(jobs, work)
        made.append(pool)
        return pool

    yield make
    for pool in made:
        pool.close()


def test_results_are_whole_and_in_order_when_bigger_than_the_pipes(pools):
    pool = pools(2, echo_big)
    size = 3 << 20  # three times the pipe size asked for
    tickets = [pool.submit((n, size)) for n in range(8)]  # all written before any result is taken
    for n, ticket in enumerate(tickets):
        (value,) = ticket.result()
        assert value == (n, bytes([n % 251]) * size)


def test_tasks_go_to_the_worker_with_the_fewest_outstanding(pools):
    pool = pools(2, raise_on_three)
    tickets = [pool.submit(n) for n in range(4)]
    assert [t.worker for t in tickets[:2]] != [tickets[0].worker] * 2
    assert [t.result() for t in tickets] == [(0,), (2,), (4,), None]  # 3 raised in the worker
    assert not pool.broken


def test_a_dead_worker_is_told_and_breaks_the_pool(pools):
    pool = pools(1, die_on_five)
    tickets = [pool.submit(n) for n in range(4, 7)]
    assert tickets[0].result() == (4,)
    with pytest.raises(WorkerDied):
        tickets[1].result()
    assert tickets[2].done() and pool.broken
    with pytest.raises(WorkerDied):
        tickets[2].result()
    with pytest.raises(WorkerDied):
        pool.submit(7)


def test_close_with_work_out_kills_and_reaps_the_workers():
    pool = ForkPool(2, sleep_long)
    pids = [w.pid for w in pool._workers]
    pool.submit(1)
    pool.close()  # would wait a minute for the sleeping worker if it were not killed
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left behind


def test_workers_never_flush_the_parents_output():
    """Text the parent buffered before forking is written once, by the parent."""
    script = textwrap.dedent("""
        import sys
        from kwire.forkpool import ForkPool
        sys.stdout.write("buffered before the fork\\n")  # not flushed: a pipe is block-buffered
        pool = ForkPool(2, abs)
        assert [pool.submit(-n).result() for n in range(4)] == [(n,) for n in range(4)]
        pool.close()
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out == "buffered before the fork\n"


def nice_here(_):
    return os.nice(0)


def test_workers_run_below_the_parents_priority(pools):
    """The parent is the serial stage; its own workers must not crowd it out (WORKER_NICE)."""
    from kwire.forkpool import WORKER_NICE

    pool = pools(1, nice_here)
    assert pool.submit(None).result() == (min(os.nice(0) + WORKER_NICE, 19),)  # 19: the lowest

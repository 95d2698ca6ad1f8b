"""An asyncio task whose running coroutine is asyncio's own: the task
"racer" runs asyncio.staggered.staggered_race (what happy-eyeballs
connections use), whose run_one_coro (asyncio/staggered.py) runs each
contender as a task of its own ("Task-N"), and the contenders burn CPU.
Prints READY once a contender runs.
"""
import asyncio
import sys
import time
from asyncio import staggered


def burn_cpu():
    t = 0
    for i in range(20000):
        t += i
    return t


async def contender():
    while True:
        burn_cpu()
        await asyncio.sleep(0)


async def main():
    started = asyncio.Event()

    async def first():
        started.set()
        await contender()

    racer = asyncio.create_task(
        staggered.staggered_race([first, contender], delay=0.05), name="racer")
    await started.wait()
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    await racer


asyncio.run(main())

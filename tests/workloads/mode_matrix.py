"""One thread that every sampling mode counts: always on a CPU (cpu),
holding the GIL (gil), inside an exception handler (exception), and a
thread like any other (wall), running as an asyncio task (--async). Its
Python chain is the same in every mode and backend:
    ...;task_body;handler;burn
Prints READY."""
import asyncio


def burn():
    x = 0
    for i in range(20000):
        x += i
    return x


def handler():
    try:
        raise KeyError("k")
    except KeyError:
        while True:
            burn()


async def task_body():
    handler()


print("READY", flush=True)
asyncio.run(task_body())

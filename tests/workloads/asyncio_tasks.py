"""asyncio workload with a known task structure, for test_pyview.py (--async).

Valid on Python 3.8 through 3.15 (TaskGroup from 3.11). One event loop in
the main thread; the task "main" starts and gathers:

  task           chain (outermost first)                     state
  cpu-1, cpu-2   cpu_outer -> cpu_middle -> cpu_inner -> spin  on CPU (spin ~5 ms a step)
  sleepy         sleeper -> asyncio.sleep                    parked on a sleep
  sock-reader    sock_reader -> loop.sock_recv               parked on a socket read
  queue-eater    queue_eater -> Queue.get                    parked on a queue a thread feeds
  tg-parent      tg_parent (async with TaskGroup)            parked on its TaskGroup
    tg-child     tg_child -> spin                            on CPU (3.11+)
  timeout-waiter timeout_waiter -> asyncio.sleep             a sleep inside asyncio.timeout (3.11+)
  thread-waiter  thread_waiter -> asyncio.to_thread          a thread of the default executor
  spawner        spawner                                     the task it created
    spawned      spawned -> asyncio.sleep                    a sleep

The thread "feeder" puts one item on the queue every 2 s (call_soon_threadsafe):
the queue eater is woken and parks again. With "many N", N more tasks
("idle-K") wait on one Event, to measure that reading stays bounded.

Prints "TASKGROUP_AEXIT 0|1", then READY (flushed) once every task has started. Runs until killed.
"""
import asyncio
import socket
import sys
import threading
import time

SPIN = 60000            # loop iterations of one spin() call (a few ms)


def spin(n):
    x = 0
    for i in range(n):
        x += i
    return x


async def cpu_inner():
    while True:
        spin(SPIN)
        await asyncio.sleep(0)


async def cpu_middle():
    await cpu_inner()


async def cpu_outer():
    await cpu_middle()


async def sleeper():
    await asyncio.sleep(3600)


async def sock_reader(sock):
    loop = asyncio.get_running_loop()
    await loop.sock_recv(sock, 100)


async def queue_eater(q):
    while True:
        await q.get()


async def tg_child():
    while True:
        spin(SPIN)
        await asyncio.sleep(0)


async def tg_parent():
    async with asyncio.TaskGroup() as tg:
        tg.create_task(tg_child(), name="tg-child")


async def timeout_waiter():
    async with asyncio.timeout(3600):
        await asyncio.sleep(3600)


async def thread_waiter():
    if not hasattr(asyncio, "to_thread"):      # 3.8: the refusal tests only need it alive
        await asyncio.get_running_loop().run_in_executor(None, time.sleep, 3600)
        return
    await asyncio.to_thread(time.sleep, 3600)


async def spawned():
    await asyncio.sleep(3600)


async def spawner():
    await asyncio.create_task(spawned(), name="spawned")


async def idle(ev):
    await ev.wait()


def feeder(loop, q):
    while True:
        time.sleep(2)
        loop.call_soon_threadsafe(q.put_nowait, 1)


async def main():
    loop = asyncio.get_running_loop()
    a, b = socket.socketpair()
    a.setblocking(False)
    q = asyncio.Queue()
    tasks = [asyncio.create_task(cpu_outer(), name="cpu-1"),
             asyncio.create_task(cpu_outer(), name="cpu-2"),
             asyncio.create_task(sleeper(), name="sleepy"),
             asyncio.create_task(sock_reader(a), name="sock-reader"),
             asyncio.create_task(queue_eater(q), name="queue-eater")]
    tasks.append(asyncio.create_task(thread_waiter(), name="thread-waiter"))
    tasks.append(asyncio.create_task(spawner(), name="spawner"))
    if sys.version_info >= (3, 11):
        tasks.append(asyncio.create_task(tg_parent(), name="tg-parent"))
        tasks.append(asyncio.create_task(timeout_waiter(), name="timeout-waiter"))
    if len(sys.argv) > 2 and sys.argv[1] == "many":
        ev = asyncio.Event()
        tasks += [asyncio.create_task(idle(ev), name="idle-%d" % k)
                  for k in range(int(sys.argv[2]))]
    threading.Thread(target=feeder, args=(loop, q), name="feeder", daemon=True).start()
    await asyncio.sleep(0.2)
    # 3.13+ TaskGroup.__aexit__ awaits TaskGroup._aexit: one frame more in the chain
    print("TASKGROUP_AEXIT %d" % hasattr(getattr(asyncio, "TaskGroup", None), "_aexit"))
    print("READY", flush=True)
    await asyncio.gather(*tasks)


asyncio.run(main())

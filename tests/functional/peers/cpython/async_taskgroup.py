#| python/cpython Lib/test/test_external_inspection.py, TestGetStackTrace.test_async_remote_stack_trace: the script it runs,
#| copied below this notice with one change: the port comes from argv[1], the loop factory from argv[2].
#| PSF licence, see ../LICENSE-PSF.
import asyncio
import time
import sys
import socket

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.connect(('localhost', int(sys.argv[1])))

def c5():
    sock.sendall(b"ready"); time.sleep(10_000)

async def c4():
    await asyncio.sleep(0)
    c5()

async def c3():
    await c4()

async def c2():
    await c3()

async def c1(task):
    await task

async def main():
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(c2(), name="c2_root")
        tg.create_task(c1(task), name="sub_main_1")
        tg.create_task(c1(task), name="sub_main_2")

def new_eager_loop():
    loop = asyncio.new_event_loop()
    eager_task_factory = asyncio.create_eager_task_factory(
        asyncio.Task)
    loop.set_task_factory(eager_task_factory)
    return loop

asyncio.run(main(), loop_factory={"asyncio.new_event_loop": asyncio.new_event_loop, "new_eager_loop": new_eager_loop}[sys.argv[2]])

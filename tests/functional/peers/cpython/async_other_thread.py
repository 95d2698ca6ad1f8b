#| python/cpython Lib/test/test_external_inspection.py, TestGetStackTrace.test_async_remote_stack_trace_from_non_main_thread: the script it runs,
#| copied below this notice with one change: the port comes from argv[1] (sys imported for it).
#| PSF licence, see ../LICENSE-PSF.
import asyncio
import socket
import sys, threading
import time

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.connect(('localhost', int(sys.argv[1])))

def blocking_call():
    sock.sendall(f"ready:{threading.get_native_id()}\n".encode())
    time.sleep(10_000)

async def worker_task():
    await asyncio.sleep(0)
    blocking_call()

async def worker_main():
    task = asyncio.create_task(
        worker_task(),
        name="worker task",
    )
    await task

def run_worker_loop():
    asyncio.run(worker_main())

threading.Thread(
    target=run_worker_loop,
    name="async-worker",
    daemon=True,
).start()
time.sleep(10_000)

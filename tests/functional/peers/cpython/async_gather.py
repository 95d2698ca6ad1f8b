#| python/cpython Lib/test/test_external_inspection.py, TestGetStackTrace.test_async_gather_remote_stack_trace: the script it runs,
#| copied below this notice with one change: the port comes from argv[1].
#| PSF licence, see ../LICENSE-PSF.
import asyncio
import time
import sys
import socket

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.connect(('localhost', int(sys.argv[1])))

async def deep():
    await asyncio.sleep(0)
    sock.sendall(b"ready"); time.sleep(10_000)

async def c1():
    await asyncio.sleep(0)
    await deep()

async def c2():
    await asyncio.sleep(0)

async def main():
    await asyncio.gather(c1(), c2())

asyncio.run(main())

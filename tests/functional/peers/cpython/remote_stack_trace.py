#| python/cpython Lib/test/test_external_inspection.py, TestGetStackTrace.test_remote_stack_trace: the script it runs,
#| copied below this notice with one change: the port comes from argv[1].
#| PSF licence, see ../LICENSE-PSF.
import time, sys, socket, threading

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.connect(('localhost', int(sys.argv[1])))

def bar():
    for x in range(100):
        if x == 50:
            baz()

def baz():
    foo()

def foo():
    sock.sendall(b"ready:thread\n"); time.sleep(10_000)

t = threading.Thread(target=bar)
t.start()
sock.sendall(b"ready:main\n"); t.join()

#| python/cpython Lib/test/test_external_inspection.py, TestDetectionOfThreadStatus._run_thread_status_test: the script it runs,
#| copied below this notice with one change: the port comes from argv[1].
#| PSF licence, see ../LICENSE-PSF.
import time, sys, socket, threading
import os

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.connect(('localhost', int(sys.argv[1])))

def sleeper():
    tid = threading.get_native_id()
    sock.sendall(f'ready:sleeper:{tid}\n'.encode())
    time.sleep(10000)

def busy():
    tid = threading.get_native_id()
    sock.sendall(f'ready:busy:{tid}\n'.encode())
    x = 0
    while True:
        x = x + 1
    time.sleep(0.5)

t1 = threading.Thread(target=sleeper)
t2 = threading.Thread(target=busy)
t1.start()
t2.start()
sock.sendall(b'ready:main\n')
t1.join()
t2.join()
sock.close()

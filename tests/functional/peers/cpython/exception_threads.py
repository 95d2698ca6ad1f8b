#| python/cpython Lib/test/test_external_inspection.py, TestDetectionOfThreadStatus._make_exception_test_script: the script it runs,
#| copied below this notice with one change: the port comes from argv[1] (sys imported for it).
#| PSF licence, see ../LICENSE-PSF.
import socket, sys
import threading
import time

def exception_thread():
    conn = socket.create_connection(("localhost", int(sys.argv[1])))
    conn.sendall(b"exception:" + str(threading.get_native_id()).encode())
    try:
        raise ValueError("test exception")
    except ValueError:
        while True:
            time.sleep(0.01)

def normal_thread():
    conn = socket.create_connection(("localhost", int(sys.argv[1])))
    conn.sendall(b"normal:" + str(threading.get_native_id()).encode())
    while True:
        sum(range(1000))

t1 = threading.Thread(target=exception_thread)
t2 = threading.Thread(target=normal_thread)
t1.start()
t2.start()
t1.join()
t2.join()

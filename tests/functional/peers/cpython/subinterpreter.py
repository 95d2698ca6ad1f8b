#| python/cpython Lib/test/test_external_inspection.py, TestGetStackTrace.test_subinterpreter_stack_trace: the script it runs,
#| copied below this notice with one change: the port comes from argv[1]; the subinterpreter's code is a literal (the test pickles it only to embed it).
#| PSF licence, see ../LICENSE-PSF.
from concurrent import interpreters
import time
import sys
import socket
import threading

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.connect(('localhost', int(sys.argv[1])))

subinterp_code = f"""
import socket
import time

def sub_worker():
    def nested_func():
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.connect(('localhost', {int(sys.argv[1])}))
        sock.sendall(b"ready:sub\\n")
        time.sleep(10_000)
    nested_func()

sub_worker()
"""

def main_worker():
    sock.sendall(b"ready:main\n")
    time.sleep(10_000)

def run_subinterp():
    subinterp = interpreters.create()
    subinterp.exec(subinterp_code)

sub_thread = threading.Thread(target=run_subinterp)
sub_thread.start()

main_thread = threading.Thread(target=main_worker)
main_thread.start()

main_thread.join()
sub_thread.join()

#| python/cpython Lib/test/test_external_inspection.py, TestGetStackTrace.test_remote_stack_trace_non_ascii_names: the script it runs,
#| copied below this notice with one change: the port comes from argv[1] (sys imported for it).
#| PSF licence, see ../LICENSE-PSF.
import socket, sys
import time

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.connect(('localhost', int(sys.argv[1])))

def zażółć_λάμβδα_𐌀𐌁𐌂𐌃():
    sock.sendall(b"ready")
    time.sleep(10_000)

zażółć_λάμβδα_𐌀𐌁𐌂𐌃()

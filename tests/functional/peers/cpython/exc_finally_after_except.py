#| python/cpython Lib/test/test_external_inspection.py, TestExceptionDetectionScenarios._make_single_scenario_script "finally_after_except": the script it runs,
#| copied below this notice with one change: the port comes from argv[1] (sys imported for it).
#| PSF licence, see ../LICENSE-PSF.
import socket, sys
import threading
import time

def target_thread():
    '''Finally runs after except handled - exc_info is cleared'''
    conn = socket.create_connection(("localhost", int(sys.argv[1])))
    conn.sendall(b"ready:" + str(threading.get_native_id()).encode())
    try:
        raise ValueError("test")
    except ValueError:
        pass  # Exception caught and handled
    finally:
        while True:
            time.sleep(0.01)

t = threading.Thread(target=target_thread)
t.start()
t.join()

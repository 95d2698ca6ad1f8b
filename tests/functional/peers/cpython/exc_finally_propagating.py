#| python/cpython Lib/test/test_external_inspection.py, TestExceptionDetectionScenarios._make_single_scenario_script "finally_propagating": the script it runs,
#| copied below this notice with one change: the port comes from argv[1] (sys imported for it).
#| PSF licence, see ../LICENSE-PSF.
import socket, sys
import threading
import time

def target_thread():
    '''Exception propagating through finally - current_exception is set'''
    conn = socket.create_connection(("localhost", int(sys.argv[1])))
    conn.sendall(b"ready:" + str(threading.get_native_id()).encode())
    try:
        try:
            raise ValueError("propagating")
        finally:
            # Exception is propagating through here
            while True:
                time.sleep(0.01)
    except:
        pass  # Never reached due to infinite loop

t = threading.Thread(target=target_thread)
t.start()
t.join()

#| benfred/py-spy tests/scripts/thread_reuse.py (commit d230d8208d65),
#| copied unchanged below this notice; MIT licence, see ../LICENSE-pyspy.
import time
import threading

while True:
    th = threading.Thread(target = lambda: time.sleep(.5))
    th.start()
    th.join()

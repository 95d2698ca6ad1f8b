#| benfred/py-spy tests/scripts/subprocesses_zombie_child.py (commit d230d8208d65),
#| copied unchanged below this notice; MIT licence, see ../LICENSE-pyspy.
import time
import multiprocessing

def target():
    pass

if __name__ == "__main__":
    multiprocessing.freeze_support()
    child = multiprocessing.Process(target=target)
    child.start()
    time.sleep(10000)
    child.join()

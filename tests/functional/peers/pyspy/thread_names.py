#| benfred/py-spy tests/scripts/thread_names.py (commit d230d8208d65),
#| copied unchanged below this notice; MIT licence, see ../LICENSE-pyspy.
import time
import threading


def main():
    for i in range(10):
        th = threading.Thread(target = lambda: time.sleep(10000))
        th.name = "CustomThreadName-%s" % i
        th.start()
    time.sleep(10000)

if __name__ == "__main__":
    main()

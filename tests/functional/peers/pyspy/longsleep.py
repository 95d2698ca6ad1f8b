#| benfred/py-spy tests/scripts/longsleep.py (commit d230d8208d65),
#| copied unchanged below this notice; MIT licence, see ../LICENSE-pyspy.
import time


def longsleep():
    time.sleep(100000)


if __name__ == "__main__":
    longsleep()

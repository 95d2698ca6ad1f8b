#| benfred/py-spy tests/scripts/negative_linenumber_offsets.py (commit d230d8208d65),
#| copied unchanged below this notice; MIT licence, see ../LICENSE-pyspy.
import time


def f():
    [
        # Must be split over multiple lines to see the error.
        # https://github.com/benfred/py-spy/pull/208
        time.sleep(1)
        for _ in range(1000)
    ]


f()

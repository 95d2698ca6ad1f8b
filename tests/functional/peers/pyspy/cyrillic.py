#| benfred/py-spy tests/scripts/cyrillic.py (commit d230d8208d65),
#| copied unchanged below this notice; MIT licence, see ../LICENSE-pyspy.
import time

def кириллица(seconds):
    time.sleep(seconds)

if __name__ == "__main__":
    кириллица(100)

#| benfred/py-spy tests/scripts/unicode💩.py (commit d230d8208d65),
#| copied unchanged below this notice; MIT licence, see ../LICENSE-pyspy.
#!/env/bin/python
# -*- coding: utf-8 -*-
import time

def function1(seconds):
    time.sleep(seconds)

if __name__ == "__main__":
    function1(100)

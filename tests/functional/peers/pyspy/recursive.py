#| benfred/py-spy tests/scripts/recursive.py (commit d230d8208d65),
#| copied unchanged below this notice; MIT licence, see ../LICENSE-pyspy.
def recurse(x):
    if x == 0:
        return
    recurse(x-1)


while True:
    recurse(20)

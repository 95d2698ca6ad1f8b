#| benfred/py-spy tests/scripts/busyloop.py (commit d230d8208d65),
#| copied unchanged below this notice; MIT licence, see ../LICENSE-pyspy.
def busy_loop():
    while True:
        pass


if __name__ == "__main__":
    busy_loop()

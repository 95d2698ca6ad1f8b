"""framewalk's own target for test_austin_like.py (written for framewalk, not
copied): two methods with the same name in two classes, one calling the
other, so only their qualified names tell them apart."""
import time


class Outer:
    def run(self):
        Inner().run()


class Inner:
    def run(self):
        print("READY", flush=True)
        time.sleep(3600)


if __name__ == "__main__":
    Outer().run()

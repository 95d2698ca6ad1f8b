"""Whole-stack workload: thread "fw-recv" blocked in socket.recv.

A local TCP server thread answers each request 200 ms after receiving it;
the client thread sends a byte and blocks in recv() for the reply, in a loop,
so it spends nearly all of its time inside the recvfrom system call.
Thread "fw-spin" runs pure Python arithmetic, always in user mode.
Prints "TID <native id of the client>", "SPIN <native id of fw-spin>" and
READY.
"""
import socket
import threading
import time

DELAY = 0.2
started = threading.Event()


def server(listener):
    conn, _ = listener.accept()
    with conn:
        while True:
            req = conn.recv(1)
            if not req:
                return
            time.sleep(DELAY)
            conn.sendall(b"r")


def client(port):
    s = socket.create_connection(("127.0.0.1", port))
    started.set()
    while True:
        s.sendall(b"q")
        reply = s.recv(1)  # @call_recv
        if not reply:
            return


def spin():
    x = 0
    while True:
        for i in range(10000):
            x = (x * 31 + i) % 1000003  # @spin_line


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    threading.Thread(target=server, args=(listener,), name="fw-server", daemon=True).start()
    t = threading.Thread(target=client, args=(port,), name="fw-recv", daemon=True)
    t.start()
    started.wait()
    sp = threading.Thread(target=spin, name="fw-spin", daemon=True)
    sp.start()
    print("TID %d" % t.native_id, flush=True)
    print("SPIN %d" % sp.native_id, flush=True)
    print("READY", flush=True)
    t.join()


if __name__ == "__main__":
    main()

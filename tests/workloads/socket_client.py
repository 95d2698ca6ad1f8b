"""A client thread blocked on a local socket whose server answers after
200 ms; the main thread just waits. Prints READY; runs until killed."""
import socket
import sys
import threading
import time

srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)


def serve():
    conn, _ = srv.accept()
    while True:
        if not conn.recv(16):
            return
        time.sleep(0.2)
        conn.sendall(b"ok")


def execute(sock):
    sock.sendall(b"query")
    return sock.recv(16)                                 # @recv


def set_os_thread_name(name):
    try:
        import ctypes
        ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)   # PR_SET_NAME
    except Exception:
        pass


def client():
    set_os_thread_name("client")
    sock = socket.create_connection(srv.getsockname())
    while True:
        execute(sock)                                    # @execute


threading.Thread(target=serve, daemon=True).start()
threading.Thread(target=client, daemon=True, name="client").start()
sys.stdout.write("READY\n")
sys.stdout.flush()
while True:
    time.sleep(1)

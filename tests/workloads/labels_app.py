"""A service whose requests set context variables (tests/functional/test_labels.py).

    labels_app.py asyncio|asyncio-wait|asyncio-wait-pytask|threads SECONDS [--otel]
    labels_app.py client PORT SECONDS CONNECTIONS

A small line-protocol server on 127.0.0.1: a request is "ROUTE TENANT\\n",
the answer "ok\\n". A middleware-like wrapper sets the ContextVars `route`
and `tenant` from the request, as web frameworks' middlewares do, then
calls the route's handler; each route's handler burns CPU in its own hot
function (hot_orders, hot_users: the same loop, so a request of either
costs the same), in slices:

- asyncio: every request runs in its own task (a copy of the connection's
  context, as ASGI servers do), and yields to the loop between slices, so
  tasks of both routes interleave on the one thread;
- asyncio-wait: the same tasks, each of which, after one slice, waits
  20 ms in its route's own coroutine (wait_orders: asyncio.sleep;
  wait_users: an Event a timer sets) before its last slice: most of the
  time every request's task is suspended, its route and tenant set in its
  own context while the thread runs another task's, or none;
  asyncio-wait-pytask: the same with asyncio's pure-Python Task
  (asyncio.tasks._PyTask, by the loop's task factory), its context an
  attribute (_context) rather than a C field;
- threads: a thread per connection (socketserver), whose own context the
  middleware sets anew for each request (no copy), as WSGI servers' worker
  threads do.

A client process (this file, "client") keeps 4 connections (threads: 2,
fewer threads trading the GIL) busy with a fixed mix: connection k's request i is /users (tenant initech) when
(i + k) % 4 == 0, else /orders, tenant acme or globex in turn (so every
connection, whatever its pace, sends the same mix). READY is
printed once the client's requests are being served; at the end one line
"DONE {json}": the requests served per "ROUTE TENANT".

--otel: the middleware also makes an OpenTelemetry span the current one
for each request (the API and SDK as shipped, vendored in vendor/: see
vendor/README.md): an /orders request opens its own, "GET /orders", with
the SDK's tracer, as OpenTelemetry's ASGI/WSGI middlewares do; a /users
request opens none and runs in its caller's span (the trace and span id a
traceparent header would carry, as TraceContextTextMapPropagator.extract()
gives it: a NonRecordingSpan, with no name). Before DONE a line
"SPANS {json}": every span current in a request, [trace_id, span_id,
name or null] in W3C's hex.
"""
import asyncio
import contextvars
import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
import time

route = contextvars.ContextVar("route")
tenant = contextvars.ContextVar("tenant", default="none")

SLICES = 8
SLICE_LOOPS = 3000
WAIT = 0.02
CONNECTIONS = {"asyncio": 4, "asyncio-wait": 4, "asyncio-wait-pytask": 4, "threads": 2}
served = {}
served_lock = threading.Lock()
OTEL = "--otel" in sys.argv[3:]
spans = []
if OTEL:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor"))
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    trace.set_tracer_provider(TracerProvider())
    tracer = trace.get_tracer("labels_app")


def request_span(req_route):
    """The request's current span as a context manager (OTEL), its ids kept."""
    if req_route == "/users":
        # the caller's span, as TraceContextTextMapPropagator.extract() gives it
        span = NonRecordingSpan(SpanContext(int.from_bytes(os.urandom(16), "big") | 1,
                                            int.from_bytes(os.urandom(8), "big") | 1,
                                            is_remote=True,
                                            trace_flags=TraceFlags(TraceFlags.SAMPLED)))
        name = None
    else:
        span = tracer.start_span("GET " + req_route)
        name = "GET " + req_route
    c = span.get_span_context()
    with served_lock:
        spans.append(["%032x" % c.trace_id, "%016x" % c.span_id, name])
    return trace.use_span(span, end_on_exit=True)


# one slice of a request's work: the same loop in both, so that either
# route's request costs the same, and each its own innermost frame
def hot_orders():          # @hot_orders
    x = 0
    for i in range(SLICE_LOOPS):
        x += i * i
    return x


def hot_users():           # @hot_users
    x = 0
    for i in range(SLICE_LOOPS):
        x += i * i
    return x


HOT = {"/orders": hot_orders, "/users": hot_users}


def count(req_route, req_tenant):
    key = "%s %s" % (req_route, req_tenant)
    with served_lock:
        served[key] = served.get(key, 0) + 1


# ---- asyncio -----------------------------------------------------------------

async def handler(req_route):
    hot = HOT[req_route]
    for _ in range(SLICES):
        hot()
        await asyncio.sleep(0)


# each route waits in its own coroutine: the innermost frame of its await chain
async def wait_orders():   # @wait_orders
    await asyncio.sleep(WAIT)


async def wait_users():    # @wait_users
    event = asyncio.Event()
    asyncio.get_running_loop().call_later(WAIT, event.set)
    await event.wait()


WAITS = {"/orders": wait_orders, "/users": wait_users}


async def handler_wait(req_route):
    hot = HOT[req_route]
    hot()
    await WAITS[req_route]()
    hot()


async def middleware(req_route, req_tenant, call_next):
    route.set(req_route)
    tenant.set(req_tenant)
    if OTEL:
        with request_span(req_route):
            await call_next(req_route)
    else:
        await call_next(req_route)
    count(route.get(), tenant.get())


async def serve_connection(reader, writer, handle=handler):
    while True:
        line = await reader.readline()
        if not line:
            break
        req_route, req_tenant = line.decode().split()
        # each request in its own task, with a copy of the connection's context
        await asyncio.create_task(middleware(req_route, req_tenant, handle))
        writer.write(b"ok\n")
        await writer.drain()
    writer.close()


async def main_asyncio(seconds, kind):
    if kind.endswith("-pytask"):
        asyncio.get_running_loop().set_task_factory(
            lambda loop, coro, **kw: asyncio.tasks._PyTask(coro, loop=loop, **kw))

    async def serve(reader, writer):
        await serve_connection(reader, writer,
                               handler_wait if kind.startswith("asyncio-wait") else handler)

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = start_client(port, seconds, CONNECTIONS[kind])
    await asyncio.sleep(0.5)
    print("READY", flush=True)
    await asyncio.sleep(seconds)
    while client.poll() is None:       # its last requests are still being served
        await asyncio.sleep(0.05)
    server.close()


# ---- threads -------------------------------------------------------------------

def middleware_sync(req_route, req_tenant, call_next):
    route.set(req_route)
    tenant.set(req_tenant)
    if OTEL:
        with request_span(req_route):
            call_next(req_route)
    else:
        call_next(req_route)
    count(route.get(), tenant.get())


def handler_sync(req_route):
    hot = HOT[req_route]
    for _ in range(SLICES):
        hot()


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            req_route, req_tenant = line.decode().split()
            middleware_sync(req_route, req_tenant, handler_sync)
            self.wfile.write(b"ok\n")


def main_threads(seconds):
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = start_client(server.server_address[1], seconds, CONNECTIONS["threads"])
    time.sleep(0.5)
    print("READY", flush=True)
    time.sleep(seconds)
    client.wait()
    server.shutdown()


# ---- the client ------------------------------------------------------------------

def start_client(port, seconds, connections):
    return subprocess.Popen([sys.executable, "-B", os.path.abspath(__file__), "client",
                             str(port), str(seconds), str(connections)],
                            stdin=subprocess.DEVNULL)


def client_connection(port, k, end):
    s = socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rwb")
    i = orders = 0
    while time.monotonic() < end:
        if (i + k) % 4 == 0:
            req = "/users initech"
        else:
            req = "/orders %s" % ("acme" if orders % 2 else "globex")
            orders += 1
        f.write(req.encode() + b"\n")
        f.flush()
        if not f.readline():
            break
        i += 1
    s.close()


def main_client(port, seconds, connections):
    end = time.monotonic() + seconds + 0.5
    threads = [threading.Thread(target=client_connection, args=(port, k, end))
               for k in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    if sys.argv[1] == "client":
        main_client(int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]))
        sys.exit(0)
    if sys.argv[1].startswith("asyncio"):
        asyncio.run(main_asyncio(float(sys.argv[2]), sys.argv[1]))
    else:
        main_threads(float(sys.argv[2]))
    if OTEL:
        print("SPANS " + json.dumps(spans), flush=True)
    print("DONE " + json.dumps(served), flush=True)

"""A service for the agent's tests: one thread spends about a third of its
time in agent_hot (a pure-Python loop: no C calls, so agent_hot is the
innermost frame of its samples) and sleeps the rest, so several of them
leave the machine's cores to the others. The command line carries
whatever tag the test gives (for the agent's --match), the environment
the service name (OTEL_SERVICE_NAME, PYROSCOPE_APPLICATION_NAME).

Prints READY (flushed); runs for --seconds N (default 120), then exits.
With --busy it never sleeps (one CPU's worth of agent_hot).
Valid on Python 3.8 through 3.15.
"""
import sys
import time


def agent_hot(n):
    x = 0
    for i in range(n):                                  # @agent_hot
        x += i * i                                      # @agent_hot
    return x


def main():
    seconds = 120.0
    if "--seconds" in sys.argv:
        seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
    pause = 0.0 if "--busy" in sys.argv else 0.004
    deadline = time.monotonic() + seconds
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    while time.monotonic() < deadline:
        agent_hot(20000)
        if pause:
            time.sleep(pause)


if __name__ == "__main__":
    main()

# framewalk's call counter, run inside the target by PEP 768 remote execution
# (sys.remote_exec's mechanism). framewalk puts one line before this text:
#   _P = {'dir': ..., 'deadline': seconds, 'cap': events, 'name': tool name,
#         'mode': 'start'|'peek'|'take'|'stop'}
# (all chosen by framewalk, none by a user). 'start' registers a
# sys.monitoring tool counting PY_START and PY_RESUME per code object and a
# watcher thread that removes it at the deadline or past the event cap;
# 'peek' writes the counts so far (top), 'take' the counts since the last
# take and starts them again from zero (the agent's periods: the code
# objects counted are let go each period), 'stop' removes it and writes
# the counts since the start (or the last take).
# Results go to files framewalk created in its own directory ('status',
# 'counts'); nothing is left behind. A process that exits while counted
# writes its counts at exit into the start's own 'counts' file (framewalk
# keeps that directory while counting), the handler removed with the tool.
def _framewalk_callcount(P):
    # C modules only (posix, not os): the script may run while the target
    # imports a Python module (at start-up, os itself), half made then
    import sys, posix as os, time, _thread, itertools, atexit, _collections
    t0 = time.perf_counter()  # the thread's pause for this request, reported
    M = sys.monitoring
    E = M.events

    def put(fname, text, dir_fd=None):
        path = fname if dir_fd is not None else P['dir'] + '/' + fname
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            data = text.encode('utf-8', 'surrogateescape')
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)

    def esc(s):
        return str(s).replace('\\', '\\\\').replace('\t', '\\t').replace('\n', '\\n').replace('\r', '\\r')

    def find():
        for i in range(6):
            if M.get_tool(i) == P['name']:
                return i
        return None

    if P['mode'] == 'start':
        if find() is not None:
            # framewalk asked again (this start's first request seemed
            # dropped, was only slow): the same counting, once
            put('status', 'ok %d 0\n' % find())
            return
        tid = None
        # the ids no tool is assigned first (0 debugger, 1 coverage, 2 profiler,
        # 5 optimizer): pdb or cProfile started during the capture still get theirs
        for i in (3, 4, 2, 5, 1, 0):
            if M.get_tool(i) is None:
                tid = i
                break
        if tid is None:
            put('status', 'busy ' + ' '.join('%d=%s' % (i, esc(M.get_tool(i)).replace(' ', '_')) for i in range(6)) + '\n')
            return
        # Per code object, an itertools.count, made on a code's first event
        # by the defaultdict itself (C: its factory is the count type, so no
        # Python runs between the lookup and the insert) and advanced by a
        # loop that breaks at once: no call after the count. CPython takes a
        # request (ours, a signal's, a thread switch) only at a function's
        # start, a loop's back edge or a call's return, so none comes
        # between the count and the counted function's body: a stop or take
        # in a callback is taken at its start, before the count, and the
        # call counts in the window its body runs in. (next() had one at its
        # return; a setdefault(code, count()) for a code's first event, two
        # before its step, which a take could land between.) Each count is
        # one C step, atomic under the GIL. A loop costs no more than
        # next()'s call and allocates less than `+= 1` on an int.
        count = itertools.count
        counts = _collections.defaultdict
        starts, resumes = counts(count), counts(count)

        def on_start(code, offset):
            for _ in starts[code]:
                break

        def on_resume(code, offset):
            for _ in resumes[code]:
                break

        pid = os.getpid()
        lock = _thread.allocate_lock()
        state = {'done': False, 'why': '', 'end': time.monotonic() + P['deadline']}
        # this request's directory, which framewalk keeps while counting: the
        # exit handler writes there through this descriptor, never by a path
        # another could replace once framewalk removed it
        try:
            keep_fd = os.open(P['dir'], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as e:
            put('status', 'error ' + esc(repr(e)) + '\n')
            return

        def remove(why):
            # only the claim under the lock: a request this thread runs during
            # the teardown (at a C call's return) finds it done, not a held lock
            with lock:
                if state['done']:
                    return False
                state['done'] = True
                state['why'] = why
            try:
                M.set_events(tid, 0)
                M.register_callback(tid, E.PY_START, None)
                M.register_callback(tid, E.PY_RESUME, None)
                M.register_callback(tid, E.EXCEPTION_HANDLED, None)
            finally:
                M.free_tool_id(tid)
                fork_box.clear()
                if why != 'exit':
                    atexit.unregister(at_exit)
                if why in ('deadline', 'event cap'):
                    # framewalk is not there to: its kept directory goes too
                    # (given to this process's user once the start succeeded)
                    for f in ('start.py', 'status', 'counts'):
                        try:
                            os.unlink(f, dir_fd=keep_fd)
                        except OSError:
                            pass
                    # by its name now: framewalk renames it as the deadline moves
                    base, _, name = P['dir'].rpartition('/')
                    prefix = name.split('-until-')[0] + '-until-'
                    try:
                        for n in os.listdir(base):
                            if n.startswith(prefix):
                                os.rmdir(base + '/' + n)
                    except OSError:
                        pass
                if why != 'exit':
                    os.close(keep_fd)
            return True

        # the process ends while counted: its counts for framewalk to read after
        # (not a forked child's, which inherits the handler: its own pid differs)
        def at_exit():
            if os.getpid() == pid and remove('exit'):
                try:
                    put('counts', report(None, time.perf_counter()), keep_fd)
                except BaseException:
                    pass  # framewalk gone and its directory with it
                finally:
                    os.close(keep_fd)

        # A forked child inherits the tool and its callbacks, not the watcher
        # (nor a framewalk to stop it): it stops counting at once. Python
        # cannot unregister an at-fork function: this one stays, reaching only
        # fork_box, which the counting's end empties (a no-op from then on).
        fork_box = {'tid': tid, 'at_exit': at_exit, 'keep_fd': keep_fd}

        def in_child():
            b = fork_box.copy()
            fork_box.clear()
            if not b:
                return
            try:
                M.set_events(b['tid'], 0)
                for ev in (E.PY_START, E.PY_RESUME, E.EXCEPTION_HANDLED):
                    M.register_callback(b['tid'], ev, None)
                M.free_tool_id(b['tid'])
            except BaseException:
                pass
            try:
                atexit.unregister(b['at_exit'])
                os.close(b['keep_fd'])
            except BaseException:
                pass

        def watch():
            ready.release()
            k = 0
            while not state['done']:
                time.sleep(0.1)
                k += 1
                if time.monotonic() >= state['end']:
                    remove('deadline')
                elif k % 10 == 0:
                    # inline, no call: the watcher's own loop runs no Python function
                    n = 0
                    for c in list(starts.values()) + list(resumes.values()):
                        n += int(repr(c)[6:-1])
                    if n > P['cap']:
                        remove('event cap')

        # the agent's period boundary: new dictionaries for the callbacks, the
        # old ones returned; the rebinding is straight-line code, no thread
        # switch within it
        def take():
            nonlocal starts, resumes
            ns, nr = counts(count), counts(count)
            s, r = starts, resumes
            starts, resumes = ns, nr
            return s, r

        def report(own, t0, taken=None):
            starts_, resumes_ = taken if taken else (starts, resumes)
            lines = []
            for code in set(starts_) | set(resumes_):
                if code is own or code.co_qualname.startswith('_framewalk_callcount') or (
                        code.co_name == '<module>' and '_framewalk_callcount' in code.co_names):
                    continue  # framewalk's own scripts, run while counting
                s, r = starts_.get(code), resumes_.get(code)
                lines.append('C\t%d\t%d\t%d\t%s\t%s\n' % (
                    int(repr(s)[6:-1]) if s else 0, int(repr(r)[6:-1]) if r else 0,
                    code.co_firstlineno, esc(code.co_filename),
                    esc(getattr(code, 'co_qualname', code.co_name))))
            lines.append('end %d %d\n' % (len(lines), (time.perf_counter() - t0) * 1e6))
            return ''.join(lines)

        # Calls whose event the counting will never see though their body
        # runs after this start: a frame standing on a RESUME that checks for
        # requests (a call's start; after a yield), in the check (this
        # thread's, taking this request; another thread's, handing the GIL
        # over; or one below a signal handler the check runs). CPython
        # decides a RESUME's event before its check, so with no one
        # watching then, that call's PY_START or PY_RESUME never comes. A
        # RESUME already instrumented (another tool, sys.setprofile,
        # sys.settrace) fires its event after the check, to this tool too:
        # not counted here. Read before this tool's events are on (they
        # instrument running code). RESUME is a lambda's first instruction
        # and INSTRUMENTED_RESUME what a local PY_START makes of it; the low
        # two bits of RESUME's argument say where it stands (0 a start, 1
        # after a yield; 2 and 3, after a yield from or an await, check
        # nothing). Returns [(code, is a start)].
        def missed_events(here):
            probe = (lambda: 0).__code__
            resume = probe.co_code[0]
            M.set_local_events(tid, probe, E.PY_START)
            instrumented = probe._co_code_adaptive[0]
            M.set_local_events(tid, probe, 0)
            me = _thread.get_ident()
            out = []
            for ident, fr in sys._current_frames().items():
                if ident == me:
                    fr = here
                while fr is not None:
                    code, at = fr.f_code, fr.f_lasti
                    raw = code.co_code
                    if 0 <= at < len(raw) - 1 and raw[at] == resume and raw[at + 1] & 3 < 2 and \
                            code._co_code_adaptive[at] != instrumented:
                        out.append((code, raw[at + 1] & 3 == 0))
                    fr = fr.f_back
            return out

        # the handle later requests find the counts by: a callback for an event
        # this tool never enables, so taking it and putting it back loses no count
        def handle(*args):
            pass

        handle.framewalk_remove = remove
        handle.framewalk_report = report
        handle.framewalk_take = take
        handle.framewalk_state = state
        M.use_tool_id(tid, P['name'])
        # the watcher first: its own loop calls no Python function, so it counts nothing
        ready = _thread.allocate_lock()
        ready.acquire()
        try:
            _thread.start_new_thread(watch, ())
            ready.acquire(timeout=5)
            M.register_callback(tid, E.PY_START, on_start)
            M.register_callback(tid, E.PY_RESUME, on_resume)
            M.register_callback(tid, E.EXCEPTION_HANDLED, handle)
            try:
                # this script's caller's caller: the frame the request interrupted
                missed = missed_events(sys._getframe(2))
            except Exception:
                missed = []  # a build without these attributes: counted from the events only
            M.set_events(tid, E.PY_START | E.PY_RESUME)
            for code, start in missed:
                for _ in (starts if start else resumes)[code]:
                    break
            atexit.register(at_exit)
            os.register_at_fork(after_in_child=in_child)
        except BaseException as e:
            remove('error')
            put('status', 'error ' + esc(repr(e)) + '\n')
            return
        put('status', 'ok %d %d\n' % (tid, (time.perf_counter() - t0) * 1e6))
    else:
        # 'stop': remove the counting, then write the counts; 'peek': write them;
        # 'take': write those since the last take, counting on from zero
        own = sys._getframe(1).f_code  # this script's module code, run while counting
        tid = find()
        handle = None
        if tid is not None:
            try:
                handle = M.register_callback(tid, E.EXCEPTION_HANDLED, None)
                if P['mode'] != 'stop':
                    M.register_callback(tid, E.EXCEPTION_HANDLED, handle)
            except ValueError:
                handle = None  # removed by its watcher in between
        report = getattr(handle, 'framewalk_report', None)
        if report is None:
            put('counts', 'gone\n')
            return
        if P['mode'] == 'stop':
            handle.framewalk_remove('stopped')
        else:
            handle.framewalk_state['end'] = time.monotonic() + P['deadline']
        try:
            text = report(own, t0, handle.framewalk_take() if P['mode'] == 'take' else None)
        except BaseException as e:
            text = 'error ' + esc(repr(e)) + '\n'
        put('counts', text)

try:
    _framewalk_callcount(_P)
finally:
    del _framewalk_callcount, _P

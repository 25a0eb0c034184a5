# dryfire passthrough helper: runs the user's Python callables for impl: mocks.
#
# Protocol (version 1): one JSON object per line. The helper writes a
# handshake line first, then one response per request. Requests:
#   {"id": N, "op": "resolve", "ref": "pkg.mod:func"}
#   {"id": N, "op": "call", "ref": "pkg.mod:func", "args": {...}}
#   {"id": N, "op": "cancel"}            (cancels an async call; sync calls run on)
# Responses:
#   {"id": N, "ok": true, "text": "..."} | {"id": N, "ok": true, "json": "..."}
#   {"id": N, "ok": false, "kind": "...", "type": "...", "message": "...", "frame": "..."}
# The protocol has file descriptors of its own: requests arrive on fd 3
# (DRYFIRE_PASSTHROUGH_REQUESTS; fd 0 on Windows) and answers leave by fd 1, both moved at once to numbers user code does
# not know (and may not close by accident); fd 0 is /dev/null, and what
# user code prints to stdout goes to stderr, which dryfire forwards with
# a prefix.
import asyncio
import io
import difflib
import importlib
import importlib.util
import inspect
import json
import os
import platform
import sys
import threading
import traceback

PROTOCOL = 1


def private(fd):
    try:
        import fcntl
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 200)
        os.set_inheritable(moved, False)
        return moved
    except ImportError:  # Windows: no descriptor numbers to keep away from
        return os.dup(fd)


def main():
    proto = private(1)
    given = int(os.environ.pop("DRYFIRE_PASSTHROUGH_REQUESTS", "0"))
    requests = private(given)
    if given == 0:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    else:
        os.close(given)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # A helper thread that fails says so in one line, not a traceback.
    threading.excepthook = lambda a: sys.stderr.write(
        "dryfire passthrough helper: thread %s failed: %s: %s\n" % (a.thread.name if a.thread else "?", a.exc_type.__name__, a.exc_value))
    # In a case's workspace, the impl modules are where dryfire was asked
    # to find them (DRYFIRE_IMPL_DIR), not the working directory.
    here = os.environ.get("DRYFIRE_IMPL_DIR") or os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)

    send_lock = threading.Lock()

    def send(msg):
        # msg is a dict, or a line already encoded by encode().
        line = msg if isinstance(msg, str) else json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
        data = (line + "\n").encode("utf-8", "surrogatepass")
        with send_lock:
            while data:
                data = data[os.write(proto, data):]

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    cache = {}
    failed = {}  # module name: the Failure importing it
    kinds = {}  # ref -> (function, is it async?), for the call path
    plain = {dict, list, str, int, float, bool, type(None)}
    tasks = {}
    import_lock = threading.Lock()

    def import_module(modname):
        # Each module is imported once: a failed import is not tried again,
        # so its top-level code does not run again.
        if modname in failed:
            raise failed[modname]
        try:
            return importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name and (modname == e.name or modname.startswith(e.name + ".")):
                f = Failure("module_not_found", e, module_not_found(e.name))
            else:
                f = Failure("import_error", e, "importing %s raised %s: %s%s; install %s for this interpreter, or choose the one that has it with --python" % (
                    modname, type(e).__name__, e, at(e), quote(e.name or "it")))
        except SyntaxError as e:
            where_ = " (at %s:%s)" % (relative(e.filename), e.lineno) if e.filename else ""
            f = Failure("import_error", e, "importing %s raised %s: %s%s" % (modname, type(e).__name__, e.msg, where_))
        except BaseException as e:
            f = Failure("import_error", e, "importing %s raised %s: %s%s" % (modname, type(e).__name__, e, at(e)))
        failed[modname] = f
        raise f

    def resolve(ref):
        fn = cache.get(ref)
        if fn is not None:
            return fn
        with import_lock:
            fn = cache.get(ref)
            if fn is not None:
                return fn
            modname, _, attr = ref.partition(":")
            mod = import_module(modname)
            obj, path = mod, modname
            for i, part in enumerate(attr.split(".")):
                if not hasattr(obj, part):
                    raise Failure("no_attribute", None, no_attribute(obj, path, part, i == 0))
                obj, path = getattr(obj, part), path + (":" if i == 0 else ".") + part
            if inspect.ismodule(obj):
                raise Failure("not_callable", None, "%s is a module, not a function: write %s:FUNCTION" % (path, obj.__name__))
            if not callable(obj):
                raise Failure("not_callable", None, "%s is not callable: it is a value of type %s; impl names a function that takes the tool's arguments as one dict" % (
                    path, type(obj).__name__))
            try:
                sig = inspect.signature(obj)
            except (TypeError, ValueError):
                sig = None  # some builtins have none: let the call tell
            if sig is not None:
                try:
                    sig.bind({})
                except TypeError:
                    name = path.rpartition(":")[2].rpartition(".")[2]
                    raise Failure("bad_signature", None, "%s%s cannot take one positional argument: dryfire calls it with the tool's arguments as one dict, %s(args), never %s(**args)" % (
                        path, sig, name, name))
            cache[ref] = obj
            return obj

    def encode(rid, value):
        if isinstance(value, str):
            return {"id": rid, "ok": True, "text": value}
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as e:
            return {"id": rid, "ok": False, "kind": "not_json", "type": type(e).__name__,
                    "message": "returned a value that is not JSON-representable: %s" % e}
        # The value goes in as JSON itself, not as a string holding JSON.
        return '{"id":%d,"ok":true,"json":%s}' % (rid, text)

    def failure(rid, e):
        if isinstance(e, Failure):
            return {"id": rid, "ok": False, "kind": e.kind, "type": e.type, "message": e.message, "frame": e.frame}
        return {"id": rid, "ok": False, "kind": "raised", "type": type(e).__name__,
                "message": str(e) or type(e).__name__, "frame": last_frame(e)}

    def run_sync(rid, fn, args):
        # In the thread that read the call: the call, and the answer.
        try:
            result = fn(args)
            if type(result) not in plain and inspect.isawaitable(result):
                result = asyncio.run_coroutine_threadsafe(_await(result), loop).result()
            send(encode(rid, result))
        except BaseException as e:
            send(failure(rid, e))

    async def run_async(rid, fn, args):
        try:
            send(encode(rid, await fn(args)))
        except asyncio.CancelledError:
            send({"id": rid, "ok": False, "kind": "cancelled", "type": "CancelledError", "message": "cancelled"})
        except BaseException as e:
            send(failure(rid, e))
        finally:
            tasks.pop(rid, None)

    def start_async(rid, fn, args):
        tasks[rid] = loop.create_task(run_async(rid, fn, args))

    def do_resolve(rid, ref):
        try:
            resolve(ref)
            send({"id": rid, "ok": True, "text": ""})
        except BaseException as e:
            send(failure(rid, e))

    def handle(msg):
        # In the thread that read the message, which has handed the reading
        # on: a sync call runs right here, an async one on the event loop.
        rid, op = msg.get("id"), msg.get("op")
        if op == "call":
            ref, args = msg.get("ref"), msg.get("args")
            kind = kinds.get(ref)
            if kind is None:
                try:
                    fn = resolve(ref)
                except BaseException as e:
                    send(failure(rid, e))
                    return
                kind = kinds[ref] = (fn, is_coroutine(fn))
            fn, is_async = kind
            if is_async:
                loop.call_soon_threadsafe(start_async, rid, fn, args)
            else:
                run_sync(rid, fn, args)
        elif op == "resolve":
            do_resolve(rid, msg.get("ref"))
        elif op == "cancel":
            # Only async calls can be cancelled; a sync call keeps its thread
            # and answers when it returns, so dryfire knows it has ended.
            loop.call_soon_threadsafe(cancel, rid)
        else:
            send({"id": rid, "ok": False, "kind": "protocol", "type": "", "message": "unknown op %r" % op})

    def cancel(rid):
        t = tasks.get(rid)
        if t is not None:
            t.cancel()

    done = asyncio.Event()
    stdin = io.open(requests, "rb", buffering=1 << 16)
    read_lock = threading.Lock()
    state_lock = threading.Lock()
    state = {"idle": 0, "eof": False}
    workers = []

    # Leader/followers: one thread at a time reads the next message; before
    # running it, it makes sure another thread is there to read on (starting
    # one when none is idle). A call thus runs in the thread that read it,
    # with no hand-over, and a blocking call never stalls the others.
    def spawn():
        t = threading.Thread(target=worker, name="impl")
        with state_lock:
            state["idle"] += 1
            workers.append(t)
        t.start()

    def worker():
        while True:
            with read_lock:
                try:
                    line = b"" if state["eof"] else stdin.readline()
                except (OSError, ValueError) as e:  # the requests' pipe is gone
                    sys.stderr.write("dryfire passthrough helper: reading requests failed: %s\n" % e)
                    line = b""
                with state_lock:
                    state["idle"] -= 1
                    need = state["idle"] == 0
                if not line:
                    if not state["eof"]:
                        state["eof"] = True
                        loop.call_soon_threadsafe(done.set)
                    return
            if need:
                spawn()
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            if isinstance(msg, dict):
                try:
                    handle(msg)
                except BaseException as e:  # a bug here must not cost the reader
                    send({"id": msg.get("id"), "ok": False, "kind": "protocol", "type": type(e).__name__,
                          "message": "the python helper failed: %s: %s" % (type(e).__name__, e)})
            with state_lock:
                if state["idle"] >= 8:
                    return
                state["idle"] += 1

    send({"dryfire_passthrough": PROTOCOL, "python": platform.python_version(), "pid": os.getpid()})
    spawn()
    loop.run_until_complete(done.wait())

    # stdin closed: wait for the calls still running, even wedged ones. A
    # sync call may still start async work, so the loop runs meanwhile.
    def drain():
        while True:
            with state_lock:
                alive = [t for t in workers if t.is_alive() and t is not threading.current_thread()]
            if not alive:
                break
            for t in alive:
                t.join()
        loop.call_soon_threadsafe(loop.stop)

    threading.Thread(target=drain, daemon=True).start()
    loop.run_forever()
    pending = [t for t in tasks.values() if not t.done()]
    if pending:
        loop.run_until_complete(asyncio.wait(pending))


def is_coroutine(fn):
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


async def _await(awaitable):
    return await awaitable


class Failure(Exception):
    def __init__(self, kind, cause, message):
        super().__init__(message)
        self.kind = kind
        self.type = type(cause).__name__ if cause is not None else ""
        self.message = message
        self.frame = last_frame(cause) if cause is not None else ""


def last_frame(e):
    """The last traceback frame of e as file:line in func, skipping the
    import machinery; a file under the run's directory is named relative to
    it, so that reports stay portable."""
    tb = traceback.extract_tb(e.__traceback__) if e is not None else []
    tb = [f for f in tb if not f.filename.startswith("<frozen ") and f.filename != importlib.__file__]
    if not tb:
        return ""
    f = tb[-1]
    return "%s:%d in %s" % (relative(f.filename), f.lineno, f.name)


def at(e):
    frame = last_frame(e)
    return " (at %s)" % frame if frame else ""


def relative(name):
    cwd = os.getcwd() + os.sep
    if name.startswith(cwd):
        return name[len(cwd):]
    return name


def quote(s):
    return json.dumps(s, ensure_ascii=False)


def where(mod):
    """Where a module was loaded from, for messages: relative to the run's
    directory when under it."""
    f = getattr(mod, "__file__", None)
    if f:
        return relative(f)
    p = list(getattr(mod, "__path__", []) or [])
    return relative(p[0]) if p else "built in"


def module_not_found(name):
    parent, _, last = name.rpartition(".")
    if not parent:
        return ("module %s not found: Python looks first in the directory dryfire runs in, then in the interpreter's sys.path; "
                "run dryfire from the directory that contains %s, or choose the interpreter that has it installed with --python") % (quote(name), name)
    pmod = sys.modules.get(parent)
    if pmod is not None and not hasattr(pmod, "__path__"):
        return "module %s not found: %s (%s) is a module, not a package" % (quote(name), parent, where(pmod))
    if pmod is not None:
        return "module %s not found: package %s (%s) has no module %s" % (quote(name), parent, where(pmod), quote(last))
    return "module %s not found" % quote(name)


def no_attribute(obj, path, part, top):
    if inspect.ismodule(obj):
        msg = "module %s (%s) has no attribute %s" % (path, where(obj), quote(part))
        if hasattr(obj, "__path__"):
            try:
                spec = importlib.util.find_spec(path + "." + part)
            except Exception:
                spec = None
            if spec is not None:
                return msg + "; %s.%s is a module: write %s.%s:FUNCTION" % (path, part, path, part)
    else:
        msg = "%s has no attribute %s" % (path, quote(part))
    names = [n for n in dir(obj) if not n.startswith("_")]
    close = difflib.get_close_matches(part, names, n=1, cutoff=0.6)
    if close:
        msg += " (did you mean %s?)" % quote(close[0])
    return msg


if __name__ == "__main__":
    try:
        main()
    except BaseException as e:  # one line of dryfire's, not a traceback
        sys.stderr.write("dryfire passthrough helper: stopped: %s: %s\n" % (type(e).__name__, e))
        sys.stderr.flush()
        os._exit(1)

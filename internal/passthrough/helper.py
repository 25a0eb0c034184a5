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
# The protocol has its own file descriptor: whatever user code prints to
# stdout goes to stderr, which dryfire forwards with a prefix.
import asyncio
import concurrent.futures
import importlib
import inspect
import json
import os
import platform
import sys
import threading
import traceback

PROTOCOL = 1


def main():
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())

    send_lock = threading.Lock()

    def send(msg):
        line = json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
        with send_lock:
            proto.write(line + "\n")
            proto.flush()

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    # A worker per concurrent sync call (idle workers are reused), so a
    # blocking call never stalls another case.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=4096, thread_name_prefix="impl")
    cache = {}
    tasks = {}
    is_async = set()
    import_lock = threading.Lock()

    def resolve(ref):
        fn = cache.get(ref)
        if fn is not None:
            return fn
        with import_lock:
            fn = cache.get(ref)
            if fn is not None:
                return fn
            modname, _, attr = ref.partition(":")
            try:
                mod = importlib.import_module(modname)
            except ModuleNotFoundError as e:
                if e.name and (modname == e.name or modname.startswith(e.name + ".")):
                    raise Failure("module_not_found", e, "module %r not found (searched sys.path, which starts with the current directory)" % e.name)
                raise Failure("import_error", e, "importing %s raised %s: %s" % (modname, type(e).__name__, e))
            except BaseException as e:
                raise Failure("import_error", e, "importing %s raised %s: %s" % (modname, type(e).__name__, e))
            obj = mod
            for part in attr.split("."):
                if not hasattr(obj, part):
                    raise Failure("no_attribute", None, "module %s has no attribute %r" % (modname, attr))
                obj = getattr(obj, part)
            if not callable(obj):
                raise Failure("not_callable", None, "%s is a %s, not a callable" % (ref, type(obj).__name__))
            cache[ref] = obj
            return obj

    def encode(rid, value):
        if isinstance(value, str):
            return {"id": rid, "ok": True, "text": value}
        try:
            text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as e:
            return {"id": rid, "ok": False, "kind": "not_json", "type": type(e).__name__,
                    "message": "returned a value that is not JSON-representable: %s" % e}
        return {"id": rid, "ok": True, "json": text}

    def failure(rid, e):
        if isinstance(e, Failure):
            return {"id": rid, "ok": False, "kind": e.kind, "type": e.type, "message": e.message, "frame": e.frame}
        return {"id": rid, "ok": False, "kind": "raised", "type": type(e).__name__,
                "message": str(e) or type(e).__name__, "frame": last_frame(e)}

    async def call(rid, ref, args):
        try:
            fn = await loop.run_in_executor(pool, resolve, ref)
            if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None)):
                is_async.add(rid)
                result = await fn(args)
            else:
                result = await loop.run_in_executor(pool, fn, args)
                if inspect.isawaitable(result):
                    result = await result
            send(encode(rid, result))
        except asyncio.CancelledError:
            send({"id": rid, "ok": False, "kind": "cancelled", "type": "CancelledError", "message": "cancelled"})
        except BaseException as e:
            send(failure(rid, e))
        finally:
            tasks.pop(rid, None)
            is_async.discard(rid)

    async def do_resolve(rid, ref):
        try:
            await loop.run_in_executor(pool, resolve, ref)
            send({"id": rid, "ok": True, "text": ""})
        except BaseException as e:
            send(failure(rid, e))

    def handle(msg):
        rid, op = msg.get("id"), msg.get("op")
        if op == "call":
            tasks[rid] = loop.create_task(call(rid, msg["ref"], msg.get("args")))
        elif op == "resolve":
            loop.create_task(do_resolve(rid, msg["ref"]))
        elif op == "cancel":
            # Only async calls can be cancelled; a sync call keeps its thread
            # and answers when it returns, so dryfire knows it has ended.
            t = tasks.get(rid)
            if t is not None and rid in is_async:
                t.cancel()
        else:
            send({"id": rid, "ok": False, "kind": "protocol", "type": "", "message": "unknown op %r" % op})

    done = asyncio.Event()

    def reader():
        for raw in sys.stdin.buffer:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            loop.call_soon_threadsafe(handle, msg)
        loop.call_soon_threadsafe(done.set)

    send({"dryfire_passthrough": PROTOCOL, "python": platform.python_version(), "pid": os.getpid()})
    threading.Thread(target=reader, daemon=True).start()
    loop.run_until_complete(done.wait())
    # stdin closed: let async calls finish, then wait for sync ones, even wedged.
    pending = [t for t in tasks.values() if not t.done()]
    if pending:
        loop.run_until_complete(asyncio.wait(pending))
    pool.shutdown(wait=True)


class Failure(Exception):
    def __init__(self, kind, cause, message):
        super().__init__(message)
        self.kind = kind
        self.type = type(cause).__name__ if cause is not None else ""
        self.message = message
        self.frame = last_frame(cause) if cause is not None else ""


def last_frame(e):
    tb = traceback.extract_tb(e.__traceback__) if e is not None else []
    if not tb:
        return ""
    f = tb[-1]
    name = f.filename
    cwd = os.getcwd() + os.sep
    if name.startswith(cwd):
        name = name[len(cwd):]  # relative to the run's directory: reports stay portable
    return "%s:%d in %s" % (name, f.lineno, f.name)


if __name__ == "__main__":
    main()

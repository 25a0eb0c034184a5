import asyncio
import os
import signal
import time

VALUE = 42
calls = 0


def echo(args):
    return args


def greet(args):
    return "hello " + args["name"]


async def aecho(args):
    await asyncio.sleep(0)
    return {"async": True, "args": args}


def boom(args):
    raise ValueError("order %s is locked" % args.get("order_id"))


async def aboom(args):
    raise KeyError("missing")


def sleep1(args):
    time.sleep(1)
    return "slept"


def wedge(args):
    time.sleep(args.get("s", 2))
    return "finally"


async def asleep(args):
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        print("cancelled cleanly")
        raise
    return "never"


def noisy(args):
    print("this goes to stderr, not the protocol")
    os.write(1, b"even raw writes to fd 1\n")
    return {"ok": True}


def none(args):
    return None


def a_list(args):
    return [1, "two", {"b": 2, "a": 1}]


def an_int(args):
    return 7


def a_set(args):
    return {1, 2}


def nan(args):
    return float("nan")


def die(args):
    os._exit(3)


def segv(args):
    import ctypes
    ctypes.string_at(0)  # a real segmentation fault


def count(args):
    global calls
    calls += 1
    return calls


class Tool:
    def __call__(self, args):
        return "callable object"


tool = Tool()


def kwargs_only(**kwargs):
    return kwargs


def close_stdin(args):
    os.close(0)  # breaks the helper's protocol: it can read no more requests
    return "closed"


def close_protocol(args):
    os.closerange(3, 256)  # the helper's answers go to a dup of fd 1 among these
    return "closed"


def close_stdin_fully(args):
    import sys  # here: the line numbers above are the tests'
    sys.stdin.close()
    try:
        os.close(0)  # /dev/null now: the requests have a descriptor of their own
    except OSError:
        pass  # closed by an earlier call
    return "closed"


def close_stdout(args):
    os.close(1)
    return "closed"


def pid(args):
    return os.getpid()

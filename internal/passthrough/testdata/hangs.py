# Imported by TestResolveHungImport: its import never finishes.
import time

time.sleep(60)


def f(args):
    return "never"

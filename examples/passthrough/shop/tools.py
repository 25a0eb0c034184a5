"""Passthrough code for examples/passthrough/tickets.dryfire.yaml.

dryfire calls each function with the tool's arguments as ONE positional
dict (never **args). Return anything JSON-representable: a string is
delivered verbatim, anything else as JSON text. Raise to deliver an error
result. Sync functions run in their own thread; async ones are awaited.
"""
import asyncio
import itertools

_ids = itertools.count(42)


def create_ticket(args):
    # Sync: may block (a database, a file) without stalling other cases.
    return {"id": next(_ids), "title": args["title"], "status": "open"}


async def search_kb(args):
    # Async: awaited on the helper's event loop.
    await asyncio.sleep(0.01)
    query = args.get("query", "").lower()
    if "refund" in query:
        return "Refunds take 5 business days."
    return "No article found."


def close_ticket(args):
    # Raising delivers an error result carrying the message.
    if args.get("id") != 42:
        raise LookupError("ticket %s does not exist" % args.get("id"))
    return {"id": 42, "status": "closed"}

"""A support agent that refunds orders through the refunds service's REST API,
with the requests library as any Python service would use it. It knows nothing
of dryfire: the service's base URL comes from REFUNDS_URL, and a drill points
that at the drill's world."""

import os
import re
import sys

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

BASE = os.environ.get("REFUNDS_URL", "https://refunds.example.com/v1")


def session():
    # Retry what the service says is busy, as it asks (Retry-After), POST too:
    # the Idempotency-Key makes a repeated refund safe.
    retry = Retry(total=3, status_forcelist=[429, 503], allowed_methods=None,
                  respect_retry_after_header=True, backoff_factor=0)
    s = requests.Session()
    s.mount("http://", HTTPAdapter(max_retries=retry))
    s.mount("https://", HTTPAdapter(max_retries=retry))
    s.headers["Authorization"] = "Bearer " + os.environ.get("REFUNDS_TOKEN", "")
    return s


def main():
    task = sys.stdin.read()
    m = re.search(r"order (\S+?)[.,]? .*?(\d+)", task)
    if not m:
        print("I could not find an order and an amount in the request.")
        return
    order, amount = m.group(1), int(m.group(2))
    s = session()
    r = s.post(BASE + "/refunds", json={"order_id": order, "amount": amount},
               headers={"Idempotency-Key": "refund-" + order}, timeout=10)
    if r.status_code == 409:
        print("Order %s was already refunded." % order)
        return
    r.raise_for_status()
    refund = r.json()
    listed = s.get(BASE + "/refunds", params={"order_id": order}, timeout=10).json()
    print("Refunded %d for order %s (refund %s, %d on record)." % (refund["amount"], order, refund["id"], len(listed)))


if __name__ == "__main__":
    main()

// A support agent that refunds orders through the refunds service's REST API
// with Node's own fetch. It knows nothing of dryfire: the service's base URL
// comes from REFUNDS_URL, and a drill points that at the drill's world.
const BASE = process.env.REFUNDS_URL ?? "https://refunds.example.com/v1";

// call retries what the service says is busy (429, 503), after Retry-After.
async function call(method, path, body, headers = {}) {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(BASE + path, {
      method,
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${process.env.REFUNDS_TOKEN ?? ""}`, ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if ((res.status === 429 || res.status === 503) && attempt < 4) {
      const wait = Number(res.headers.get("Retry-After") ?? "1");
      await new Promise((r) => setTimeout(r, wait * 1000));
      continue;
    }
    return res;
  }
}

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const task = Buffer.concat(chunks).toString();
const m = task.match(/order (\S+?)[.,]? .*?(\d+)/);
if (!m) {
  console.log("I could not find an order and an amount in the request.");
} else {
  const [order, amount] = [m[1], Number(m[2])];
  const res = await call("POST", "/refunds", { order_id: order, amount }, { "Idempotency-Key": `refund-${order}` });
  if (res.status === 409) {
    console.log(`Order ${order} was already refunded.`);
  } else if (!res.ok) {
    throw new Error(`refunds answered ${res.status}: ${await res.text()}`);
  } else {
    const refund = await res.json();
    const listed = await (await call("GET", `/refunds?order_id=${encodeURIComponent(order)}`)).json();
    console.log(`Refunded ${refund.amount} for order ${order} (refund ${refund.id}, ${listed.length} on record).`);
  }
}

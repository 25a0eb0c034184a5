// The production clients of the shop's services (HTTP). The agent's tools
// call these; the tests replace the module, so they never run there.

export interface Order {
  order_id: string;
  customer: string;
  total: number;
  status: string;
}

export interface Refund {
  refund_id: string;
  status: string;
}

async function call<T>(path: string, body: unknown): Promise<T> {
  const base = process.env.SHOP_API_URL;
  if (base === undefined) throw new Error("orders-client: SHOP_API_URL is not set");
  const res = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`orders-client: ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export function lookupOrder(orderId: string): Promise<Order> {
  return call("/orders/get", { order_id: orderId });
}

export function issueRefund(orderId: string, amount: number, requestId: string): Promise<Refund> {
  return call("/refunds/create", { order_id: orderId, amount, request_id: requestId });
}

export function openTicket(subject: string): Promise<{ ticket: number }> {
  return call("/tickets/open", { subject });
}

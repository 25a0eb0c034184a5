// The support agent on the Vercel AI SDK, run in-process: vi.mock replaces
// its tool functions (orders-client) with world operations (mockTool), and
// its model client is pointed at the drill's model endpoint, which replays
// the drill's cassette. The second drill is the failing variant: the
// recorded model refunds a shipped order instead of opening a ticket.
import { afterEach, expect, test, vi } from "vitest";
import { runDrills, type Binding } from "dryfire";
import { mockTool } from "dryfire/testing";
import { issueRefund, lookupOrder, openTicket } from "../src/orders-client.js";
import { runSupportAgent } from "../src/agent.js";

vi.mock("../src/orders-client.js", () => ({ lookupOrder: vi.fn(), issueRefund: vi.fn(), openTicket: vi.fn() }));
afterEach(() => vi.resetAllMocks());

function installShop(binding: Binding) {
  vi.mocked(lookupOrder).mockImplementation(
    mockTool(binding, { mode: "async", operation: "orders/orders.get", input: (orderId: string) => ({ order_id: orderId }) }),
  );
  vi.mocked(issueRefund).mockImplementation(
    mockTool(binding, {
      mode: "async",
      operation: "refunds/refunds.create",
      input: (orderId: string, amount: number, requestId: string) => ({ order_id: orderId, amount, request_id: requestId }),
      idempotencyKey: (_orderId: string, _amount: number, requestId: string) => requestId,
    }),
  );
  vi.mocked(openTicket).mockImplementation(
    mockTool(binding, { mode: "async", operation: "tickets/tickets.open", input: (subject: string) => ({ subject }) }),
  );
}

// The model client gets the drill's endpoint and the placeholder key from
// the binding (never a real key; the endpoint replays the cassette).
const agent = async ({ task, binding }: { task: { instruction: string }; binding: Binding }) => {
  installShop(binding);
  return runSupportAgent(task.instruction, { baseURL: binding.env.OPENAI_BASE_URL, apiKey: binding.env.OPENAI_API_KEY });
};

test("the agent refunds a delivered order", async () => {
  const result = await runDrills({ drill: "refund-a-delivered-order", agent });
  expect(result.failures).toEqual([]);
  expect(result.verdict).toBe("passed");
  expect(result.evidence.map((e) => e.operation)).toEqual(["orders/orders.get", "refunds/refunds.create"]);
  expect(result.output).toBe("Your refund R-1 of 120 for order A-991 is on its way.");
  expect(vi.mocked(issueRefund)).toHaveBeenCalledWith("A-991", 120, "refund-A-991");
});

test("failing variant: the agent tries to refund a shipped order instead of opening a ticket", async () => {
  const result = await runDrills({ drill: "a-shipped-order-gets-a-ticket", agent });
  expect(result.verdict).toBe("failed");
  expect(result.status).toBe("failed");
  expect(result.failures).toEqual([
    "expected refunds/refunds.create never to be called; it was called 1 time",
    "expected tickets/tickets.open to be called exactly 1 time; it was called 0 times",
  ]);
  expect(result.evidence.map((e) => [e.operation, e.is_error, (e.result as { code?: string }).code ?? null])).toEqual([
    ["orders/orders.get", false, null],
    ["refunds/refunds.create", true, "NOT_REFUNDABLE"],
  ]);
  expect(result.output).toBe("I could not refund order A-992: it has not been delivered yet.");
});

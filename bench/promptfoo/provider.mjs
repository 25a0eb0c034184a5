// An offline model for bench/promptfoo/run.sh: every prompt gets the same
// answer, an assistant turn that calls lookup_order and says the tier. No
// network, no key.
const answer = JSON.stringify({
  content: 'Your order is gold.',
  tool_calls: [{ name: 'lookup_order', arguments: { order_id: 'A-991' } }],
});

export default class ScriptedModel {
  id() {
    return 'scripted';
  }

  async callApi() {
    return { output: answer };
  }
}

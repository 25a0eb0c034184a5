// Writes promptfooconfig.yaml of N cases into DIR, the shape of bench/table's
// many.dryfire.yaml: each case one model answer with a tool call, two checks
// (the tool call's name and arguments; the answer contains "gold").
// TIER and ORDER change what the checks expect (run.sh's controls: every
// case must fail).
//
//	node gen.mjs DIR N [TIER [ORDER]]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, n = '500', tier = 'gold', order = 'A-991'] = process.argv.slice(2);
const provider = new URL('./provider.mjs', import.meta.url).pathname;
let y = `description: dryfire bench, ${n} cases
prompts: ['Look up order {{order_id}}.']
providers: [${JSON.stringify('file://' + provider)}]
tests:
`;
// One expression (promptfoo wraps a one-line value in return).
const check =
  `JSON.parse(output).tool_calls.some((c) => c.name === 'lookup_order' && c.arguments.order_id === '${order}')`;
for (let i = 0; i < Number(n); i++) {
  y += `  - description: case-${i}
    vars: {order_id: A-991}
    assert:
      - type: javascript
        value: ${JSON.stringify(check)}
      - type: contains
        value: ${tier}
`;
}
writeFileSync(join(dir, 'promptfooconfig.yaml'), y);

# gen.py writes the hostile corpus (testdata/*.txtar, without want sections):
#   python3 gen.py && go test . -update   # then review every want section

import json, os
def R(t, n):
    return "{%%repeat %d %s%%}" % (n, json.dumps(t))
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")
items = {}
def item(name, cmd, files, env=None, note=""):
    assert name not in items, name
    items[name] = (cmd, files, env, note)

HEAD = "version: 1\nname: h\nagent: {provider: script}\n"
CASE = "cases: [{name: a, input: hi, script: [{text: ok}]}]\n"
def suite(name, text, note="", cmd="validate s.dryfire.yaml", env=None):
    item("suite-" + name, cmd, {"s.dryfire.yaml": text}, env, note)

# --- suites: YAML structure ---
suite("deep-flow-sequences", HEAD + "mocks: {t: [{return: " + R("[", 10000) + R("]", 10000) + "}]}\n" + CASE)
suite("deep-flow-mappings", HEAD + "mocks: {t: [{return: " + R("{a: ", 10000) + "1" + R("}", 10000) + "}]}\n" + CASE)
suite("unclosed-deep", R("[", 10000))
suite("deep-block", "".join("  "*i + "a:\n" for i in range(300)))
laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
prev = "a"
for n in "bcdefghi":
    laughs += "%s: &%s [%s]\n" % (n, n, ", ".join(["*"+prev]*9)); prev = n
suite("billion-laughs", laughs)
suite("alias-bomb-in-mocks", HEAD + "x: &x [1,1,1,1,1,1,1,1,1,1]\ny: &y [*x,*x,*x,*x,*x,*x,*x,*x,*x,*x]\nz: &z [*y,*y,*y,*y,*y,*y,*y,*y,*y,*y]\nmocks: {t: [{return: [*z,*z,*z,*z,*z,*z,*z,*z,*z,*z]}]}\n" + CASE)
suite("self-alias", "a: &a [*a]\n")
suite("undefined-alias", HEAD + "mocks: *nope\n" + CASE)
suite("huge-int", HEAD + "mocks: {t: [{return: " + R("9", 100000) + "}]}\n" + CASE)
suite("huge-max-turns", "version: 1\nagent: {provider: script, max_turns: 99999999999999999999999999}\n" + CASE)
suite("huge-exponent", "version: 1\nagent: {provider: script, max_turns: 1e999999999}\n" + CASE)
suite("huge-hex", HEAD + "mocks: {t: [{return: 0x" + R("F", 10000) + "}]}\n" + CASE)
suite("huge-float-return", HEAD + "mocks: {t: [{return: {a: 1e400}}]}\n" + CASE)
suite("long-line", HEAD + "description: " + "x"*(1<<20) + "\n" + CASE)
suite("many-keys", HEAD + "mocks:\n  t:\n    - return:\n" + "{%range $i := 50000%}        k{%$i%}: v\n{%end%}" + CASE)
suite("nul-bytes", "version: 1\x00\nagent: {provider: \x00script}\n" + CASE)
suite("only-nul", "\x00\x00\x00")
suite("invalid-utf8", "version: 1\nname: \xff\xfe\n".encode("latin-1").decode("latin-1") + "agent: {provider: script}\n" + CASE)
suite("bom", "\ufeff" + HEAD + CASE)
suite("utf16", "\ufffev\x00e\x00r\x00")
suite("crlf", (HEAD + CASE).replace("\n", "\r\n"))
suite("cr-only", (HEAD + CASE).replace("\n", "\r"))
suite("tab-indent", "version: 1\nagent:\n\tprovider: script\n" + CASE)
suite("duplicate-keys", HEAD + "version: 2\n" + CASE)
suite("empty", "")
suite("only-comments", "# nothing\n# here\n")
suite("top-level-list", "- a\n- b\n")
suite("top-level-scalar", "hello\n")
suite("version-2", "version: 2\nagent: {provider: script}\n" + CASE)
suite("version-string", "version: \"1\"\nagent: {provider: script}\n" + CASE)
suite("no-agent", "version: 1\n" + CASE)
suite("agent-string", "version: 1\nagent: script\n" + CASE)
suite("unknown-provider", "version: 1\nagent: {provider: gpt-9}\n" + CASE)
suite("cases-mapping", HEAD + "cases: {a: 1}\n")
suite("cases-empty", HEAD + "cases: []\n")
suite("case-name-null", HEAD + "cases: [{name: null, input: hi, script: [{text: ok}]}]\n")
suite("duplicate-case-names", HEAD + "cases:\n" + R("  - {name: same, input: hi, script: [{text: ok}]}\n", 1000))
suite("case-name-ansi-newline", HEAD + "cases: [{name: \"a\\nPASS  forged\\u001b[32m\", input: hi, script: [{text: ok}]}]\n", cmd="run s.dryfire.yaml")
suite("long-names-did-you-mean", HEAD + "tools:\n" + "".join("  %s: {description: d}\n" % R(c, 3000) for c in "abc") + "mocks: {" + R("d", 3000) + ": [{return: 1}]}\n" + CASE)
suite("many-unknown-keys", HEAD + "{%range $i := 5000%}k{%$i%}: 1\n{%end%}" + CASE)
suite("bad-regex-when", HEAD + "mocks: {t: [{when: {q: {regex: \"(\"}}, return: 1}]}\n" + CASE)
suite("huge-regex-repeat", HEAD + "cases: [{name: a, input: hi, script: [{text: ok}], expect: [{output: {regex: \"a{1000}{1000}\"}}]}]\n")
suite("catastrophic-regex", HEAD + "cases: [{name: a, input: hi, script: [{text: " + R("a", 5000) + "}], expect: [{output: {regex: \"(a+)+$\"}}]}]\n", cmd="run s.dryfire.yaml")
suite("script-unknown-tool", HEAD + "cases: [{name: a, input: hi, script: [{tool_calls: [{name: nope, args: {}}]}, {text: ok}]}]\n")
suite("unknown-check", HEAD + "cases: [{name: a, input: hi, script: [{text: ok}], expect: [{telepathy: true}]}]\n")
suite("timeout-1e10", "version: 1\nagent: {provider: script, timeout_s: 1e10}\n" + CASE)
suite("timeout-negative", "version: 1\nagent: {provider: script, timeout_s: -1}\n" + CASE)
suite("max-turns-zero", "version: 1\nagent: {provider: script, max_turns: 0}\n" + CASE)
suite("retries-100", "version: 1\nagent: {provider: script, retries: 100}\n" + CASE)
suite("rule-timeout-huge", HEAD + "mocks: {t: [{impl: 'a.b:c', timeout_s: 1e12}]}\n" + CASE)
defs = {"d6": {"type": "string", "minLength": 5}}
for i in range(5, -1, -1):
    defs["d%d" % i] = {"anyOf": [{"$ref": "#/$defs/d%d" % (i+1)}]*20}
bomb = json.dumps({"$defs": defs, "$ref": "#/$defs/d0"})
suite("output-schema-anyof-bomb", HEAD + "cases: [{name: a, input: hi, script: [{text: ok}], expect: [{output: {json_schema: %s}}]}]\n" % bomb)
suite("input-schema-anyof-bomb", HEAD + "tools: {t: {description: d, input_schema: %s}}\n" % bomb + CASE)
suite("schema-external-ref", HEAD + "tools: {t: {description: d, input_schema: {$ref: 'https://example.com/x.json'}}}\n" + CASE)
suite("schema-file-ref", HEAD + "tools: {t: {description: d, input_schema: {$ref: 'file:///etc/passwd'}}}\n" + CASE)
suite("schema-invalid", HEAD + "tools: {t: {description: d, input_schema: {type: 12}}}\n" + CASE)
suite("schema-self-ref-loop", HEAD + "tools: {t: {description: d, input_schema: {$defs: {a: {$ref: '#/$defs/a'}}, $ref: '#/$defs/a'}}}\n" + CASE)
suite("tool-args-deep", HEAD + "tools: {t: {description: d}}\nmocks: {t: [{return: 1}]}\ncases: [{name: a, input: hi, script: [{tool_calls: [{name: t, args: " + R("{a: ", 500) + "1" + R("}", 500) + "}]}, {text: ok}]}]\n", cmd="run s.dryfire.yaml")
suite("tool-args-huge-string", HEAD + "tools: {t: {description: d}}\nmocks: {t: [{when: {a: {regex: '^x+$'}}, return: 1}]}\ncases: [{name: a, input: hi, script: [{tool_calls: [{name: t, args: {a: " + R("x", 500000) + "}}]}, {text: ok}]}]\n", cmd="run s.dryfire.yaml")
suite("return-1e400-run", HEAD + "tools: {t: {description: d}}\nmocks: {t: [{return: {a: 1e400}}]}\ncases: [{name: a, input: hi, script: [{tool_calls: [{name: t, args: {}}]}, {text: ok}], expect: [{called: {tool: t}}]}]\n", cmd="run s.dryfire.yaml")
suite("sequence-huge", HEAD + "tools: {t: {description: d}}\nmocks: {t: [{sequence: [" + R("{return: 1}, ", 19999) + "{return: 1}" + "]}]}\n" + CASE)
suite("max-turns-loop", "version: 1\nagent: {provider: script, max_turns: 3}\ntools: {t: {description: d}}\nmocks: {t: [{return: 1}]}\ncases: [{name: a, input: hi, script: [" + ", ".join(["{tool_calls: [{name: t, args: {}}]}"]*10) + "]}]\n", cmd="run s.dryfire.yaml")
suite("size-limit", HEAD + "description: " + R("x", 1100*1024) + "\n" + CASE, env="DRYFIRE_MAX_FILE_MB=1")
suite("size-limit-env-garbage", HEAD + CASE, env="DRYFIRE_MAX_FILE_MB=lots")
suite("world-escape", "version: 1\nname: h\nworld: ../../../../../../etc/passwd\nagent: {provider: script}\n" + CASE)
suite("world-absolute", "version: 1\nname: h\nworld: /etc/passwd\nagent: {provider: script}\n" + CASE)
suite("world-missing", "version: 1\nname: h\nworld: nope.world.yaml\nagent: {provider: script}\n" + CASE)
suite("world-is-dir", "version: 1\nname: h\nworld: .\nagent: {provider: script}\n" + CASE)
suite("named-dot-dot", HEAD + CASE)  # the file name is the point below
suite("impl-bad-ref", HEAD + "mocks: {t: [{impl: 'not a ref'}]}\n" + CASE)
suite("params-huge", "version: 1\nagent: {provider: script, params: {" + "{%range $i := 20000%}k{%$i%}: 1, {%end%}k: 1" + "}}\n" + CASE)
suite("expect-deep", HEAD + "cases: [{name: a, input: hi, script: [{text: ok}], expect: [{output: {equals: " + R("[", 3000) + R("]", 3000) + "}}]}]\n")
suite("case-input-huge", HEAD + "cases: [{name: a, input: " + R("y", 2000000) + ", script: [{text: ok}]}]\n", cmd="run s.dryfire.yaml")
suite("filter-bad-regex", HEAD + CASE, cmd="run --filter ( s.dryfire.yaml")
suite("concurrency-huge", HEAD + CASE, cmd="run --concurrency 1000000000 s.dryfire.yaml")
suite("concurrency-negative", HEAD + CASE, cmd="run --concurrency -5 s.dryfire.yaml")
suite("seed-huge", HEAD + CASE, cmd="run --seed 99999999999999999999999 s.dryfire.yaml")
suite("record-bogus", HEAD + CASE, cmd="run --record sometimes s.dryfire.yaml")
suite("json-to-dir", HEAD + CASE, cmd="run --json . s.dryfire.yaml")

# --- worlds ---
WHEAD = "version: 1\nworld: w\n"
def world(name, text, star=None, note="", extra=None):
    files = {"w.world.yaml": text}
    if star is not None:
        files["b.star"] = star
    if extra:
        files.update(extra)
    item("world-" + name, "validate w.world.yaml", files, None, note)
OPS = "packages:\n  p:\n    operations:\n      op: {tool: op, behavior: h, input: {type: object}}\n"
def wrun(name, star, wextra="", script=None, note=""):
    w = WHEAD + "behaviors: [b.star]\n" + wextra + OPS
    s = "version: 1\nname: d\nworld: w.world.yaml\nagent: {provider: script}\ncases: [{name: a, input: hi, script: [%s{text: ok}], expect: [{no_errors: true}]}]\n" % (script if script is not None else "{tool_calls: [{name: op, args: {}}]}, {tool_calls: [{name: op, args: {}}]}, ")
    item("behavior-" + name, "run s.dryfire.yaml", {"w.world.yaml": w, "b.star": star, "s.dryfire.yaml": s}, None, note)
def body(b):
    return "def h(ctx, args):\n" + "".join("    " + l + "\n" for l in b.split("\n"))
wrun("self-reschedule", body("ctx.schedule('+0s', 'p/op', {})\nreturn {}"))
wrun("doubling-concat", body("s = 'ab'\nfor i in range(40):\n    s = s + s\nreturn {}"))
wrun("augmented-doubling", body("s = 'ab'\nfor i in range(40):\n    s += s\nreturn {}"))
wrun("list-doubling", body("l = [1]\nfor i in range(40):\n    l += l\nreturn {}"))
wrun("extend-doubling", body("l = [1]\nfor i in range(40):\n    l.extend(l)\nreturn {}"))
wrun("string-repeat-1g", body("s = 'a' * 1000000000\nreturn {}"))
wrun("list-repeat", body("l = [0] * 100000000\nreturn {}"))
wrun("list-of-range", body("l = list(range(1000000000))\nreturn {}"))
wrun("sorted-of-range", body("l = sorted(range(1000000000))\nreturn {}"))
wrun("tuple-of-range", body("l = tuple(range(1000000000))\nreturn {}"))
wrun("dict-comprehension-big", body("d = {i: i for i in range(100000000)}\nreturn {}"))
wrun("replace-blowup", body("s = 'a' * 100000\ns = s.replace('', s)\nreturn {}"))
wrun("join-blowup", body("s = 'a' * 100000\ns = s.join([s] * 10000)\nreturn {}"))
wrun("format-blowup", body("s = 'a' * 1000000\nf = '{}' * 1000\nreturn {'f': f.format(s)}"))
wrun("percent-blowup", body("s = 'a' * 1000000\nf = '%(a)s' * 1000\nreturn {'f': f % {'a': s}}"))
wrun("str-shared-nesting", body("x = [1]\nfor i in range(40):\n    x = [x, x]\nreturn {'s': str(x)}"))
wrun("return-shared-nesting", body("x = [1]\nfor i in range(40):\n    x = [x, x]\nreturn {'x': x}"))
wrun("state-shared-nesting", body("x = [1]\nfor i in range(40):\n    x = [x, x]\nctx.state('c')['x'] = x\nreturn {}"))
wrun("emit-shared-nesting", body("x = [1]\nfor i in range(40):\n    x = [x, x]\nctx.emit('e', x)\nreturn {}"))
wrun("big-int-squaring", body("x = 3\nfor i in range(40):\n    x = x * x\nreturn {}"))
wrun("big-int-shift", body("x = 3\nfor i in range(400):\n    x = x << 500\nreturn {}"))
wrun("split-blowup", body("s = ',' * 10000000\nl = s.split(',')\nreturn {}"))
wrun("elems-blowup", body("s = 'a' * 10000000\nl = list(s.elems())\nreturn {}"))
wrun("infinite-loop", body("while True:\n    pass\nreturn {}"))
wrun("recursion", "def f(n):\n    return f(n + 1)\n" + body("return f(0)"))
wrun("deep-return", body("x = 1\nfor i in range(300):\n    x = [x]\nreturn {'x': x}"))
wrun("cyclic-return", body("l = []\nl.append(l)\nreturn {'l': l}"))
wrun("return-function", body("return h"))
wrun("return-int-keys", body("return {1: 2}"))
wrun("return-nan", body("return {'x': float('nan')}"))
wrun("return-inf", body("return {'x': 1e308 * 10}"))
wrun("fail", body("fail('boom')"))
wrun("division-by-zero", body("return {'x': 1 // 0}"))
wrun("index-out-of-range", body("return {'x': [][5]}"))
wrun("schedule-unknown-op", body("ctx.schedule('+1m', 'p/nope', {})\nreturn {}"))
wrun("schedule-bad-at", body("ctx.schedule('tomorrow', 'p/op', {})\nreturn {}"))
wrun("schedule-huge-at", body("ctx.schedule('+99999999999h', 'p/op', {})\nreturn {}"))
wrun("schedule-many", body("for i in range(5000):\n    ctx.schedule('+1h', 'p/op', {})\nreturn {}"))
wrun("schedule-args-list", body("ctx.schedule('+1m', 'p/op', [1])\nreturn {}"))
wrun("emit-function", body("ctx.emit('e', h)\nreturn {}"))
wrun("error-undeclared", body("return ctx.error('NOPE', 'x')"))
wrun("state-unknown-package", body("ctx.state('nope.c')\nreturn {}"))
wrun("state-non-json", body("ctx.state('c')['x'] = h\nreturn {}"))
wrun("mutate-frozen-global", "G = [1]\n" + body("G.append(2)\nreturn {}"))
wrun("reschedule-plus-one-second-advance", body("ctx.schedule('+1s', 'p/op', {})\nreturn {}"), wextra="clock: {tick: 1000000h}\n")
wrun("args-huge-call", body("return {}"), script="{tool_calls: [{name: op, args: {a: " + R("z", 300000) + "}}]}, ")
wrun("args-deep-call", body("return args"), script="{tool_calls: [{name: op, args: " + R("{a: ", 300) + "1" + R("}", 300) + "}]}, ")
wrun("args-not-object", body("return {}"), script="{tool_calls: [{name: op, args: [1, 2]}]}, ")
wrun("memory-limit-raised-small", body("s = 'a' * 2000000\nreturn {}"), wextra="limits: {memory_mb: 1}\n")
wrun("events-per-tick-small", body("ctx.schedule('+0s', 'p/op', {})\nreturn {}"), wextra="limits: {events_per_tick: 5}\n")
wrun("scheduled-per-call-small", body("for i in range(3):\n    ctx.schedule('+1h', 'p/op', {})\nreturn {}"), wextra="limits: {scheduled_per_call: 2}\n")
wrun("step-budget-small", body("for i in range(1000):\n    pass\nreturn {}"), wextra="step_budget: 10\n")
def wmod(name, star):
    world(name, WHEAD + "behaviors: [b.star]\n" + OPS, star)
wmod("module-top-level-loop", "while True:\n    pass\n" + body("return {}"))
wmod("module-top-level-memory", "s = 'ab'\nfor i in range(40):\n    s = s + s\n" + body("return {}"))
wmod("module-top-level-repeat", "s = 'a' * 1000000000\n" + body("return {}"))
wmod("module-load", "load('x.star', 'y')\n" + body("return {}"))
wmod("module-syntax-error", "def h(ctx, args)\n    return {}\n")
wmod("module-reserved-name", "__dryfire_op__ = 1\n" + body("return {}"))
wmod("module-no-function", "h = 1\n")
wmod("module-empty", "")
wmod("module-binary", "\x00\x01\x02\xff")
wmod("module-deep-expression", "x = " + R("(", 2000) + "1" + R(")", 2000) + "\n" + body("return {}"))
wmod("module-huge-list-literal", "x = [" + R("1,", 199999) + "1" + "]\n" + body("return {}"))
wmod("module-recursion-at-load", "def f(n):\n    return f(n)\nf(1)\n" + body("return {}"))
wmod("module-print", "print('hello')\n" + body("return {}"))
world("behaviors-escape", WHEAD + "behaviors: [../../../../../../etc/passwd]\n" + OPS)
world("behaviors-absolute", WHEAD + "behaviors: [/etc/passwd]\n" + OPS)
world("behaviors-missing", WHEAD + "behaviors: [nope.star]\n" + OPS)
world("behaviors-dir", WHEAD + "behaviors: [.]\n" + OPS)
world("behaviors-twice", WHEAD + "behaviors: [b.star, b.star]\n" + OPS, body("return {}"))
world("behaviors-not-list", WHEAD + "behaviors: b.star\n" + OPS, body("return {}"))
world("step-budget-max", WHEAD + "step_budget: 9223372036854775807\n" + OPS.replace("behavior: h, ", ""))
world("step-budget-zero", WHEAD + "step_budget: 0\n" + OPS.replace("behavior: h, ", ""))
world("limits-out-of-range", WHEAD + "limits: {memory_mb: 0, events_per_tick: 99999999999, scheduled_per_call: -1, nope: 1}\n" + OPS.replace("behavior: h, ", ""))
world("input-schema-anyof-bomb", WHEAD + "packages:\n  p:\n    operations:\n      op: {tool: op, input: %s}\n" % bomb)
world("output-schema-anyof-bomb", WHEAD + "packages:\n  p:\n    operations:\n      op: {tool: op, output: %s}\n" % bomb)
world("clock-start-garbage", WHEAD + "clock: {start: yesterday, tick: 1s}\n" + OPS.replace("behavior: h, ", ""))
world("clock-tick-negative", WHEAD + "clock: {tick: -1s}\n" + OPS.replace("behavior: h, ", ""))
world("clock-tick-huge", WHEAD + "clock: {tick: 99999999999999h}\n" + OPS.replace("behavior: h, ", ""))
world("seed-huge", WHEAD + "seed: 99999999999999999999\n" + OPS.replace("behavior: h, ", ""))
world("events-at-garbage", WHEAD + OPS.replace("behavior: h, ", "") + "events: [{id: e, at: never, operation: p/op}]\n")
world("events-many", WHEAD + OPS.replace("behavior: h, ", "") + "events: [" + "{%range $i := 20000%}{id: e{%$i%}, at: '+1s', operation: p/op}, {%end%}{id: last, at: '+1s', operation: p/op}" + "]\n")
world("tool-name-bad", WHEAD + "packages:\n  p:\n    operations:\n      op: {tool: 'bad name!'}\n")
world("tool-name-duplicate", WHEAD + "packages:\n  p:\n    operations:\n      a: {tool: t}\n      b: {tool: t}\n")
world("package-empty", WHEAD + "packages: {}\n")
world("deep-state", WHEAD + "packages:\n  p:\n    state: {c: " + R("{a: ", 5000) + "1" + R("}", 5000) + "}\n    operations: {op: {}}\n")
world("override-bad", WHEAD + OPS.replace("behavior: h, ", "") + "toolOverrides: [{id: x, operation: p/nope, outcome: {kind: teleport}}]\n")
world("actors-unknown-op", WHEAD + OPS.replace("behavior: h, ", "") + "actors: {a: {allow: ['p/nope', '[']}}\n")
world("budgets-negative", WHEAD + OPS.replace("behavior: h, ", "") + "budgets: [{operation: p/op, calls: -5}]\n")
world("faults-rate-bad", WHEAD + OPS.replace("behavior: h, ", "") + "faults: [{id: f, operation: p/op, code: X, rate: 7}]\n")
world("yaml-bomb", WHEAD + laughs)
world("not-a-world", "hello: there\n")

# --- cassettes (replayed with --record none) ---
CS = "version: 1\nname: c\nagent: {provider: anthropic, model: claude-test}\ncases: [{name: a, input: hi}]\n"
def cass(name, data):
    item("cassette-" + name, "run --record none c.dryfire.yaml", {"c.dryfire.yaml": CS, "cassettes/c/a.json": data}, None)
cass("empty", "")
cass("not-json", "hello\n")
cass("truncated", '{"dryfire_cassette": 1, "interactions": [')
cass("array", "[]\n")
cass("null", "null\n")
cass("wrong-version", '{"dryfire_cassette": 99, "interactions": []}\n')
cass("version-string", '{"dryfire_cassette": "1", "interactions": []}\n')
cass("no-version", '{"interactions": []}\n')
cass("interactions-object", '{"dryfire_cassette": 1, "interactions": {}}\n')
cass("interaction-null", '{"dryfire_cassette": 1, "interactions": [null]}\n')
cass("request-missing", '{"dryfire_cassette": 1, "interactions": [{"response": {"status": 200}}]}\n')
cass("status-huge", '{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/v1/messages", "body": {}}, "response": {"status": 99999999999999999999, "body": {}}}]}\n')
cass("deep-body", '{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/v1/messages", "body": ' + R("[", 100000) + R("]", 100000) + '}, "response": {"status": 200}}]}\n')
cass("huge-number", '{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/v1/messages", "body": {"x": 1' + R("0", 100000) + '}}, "response": {"status": 200, "body": {}}}]}\n')
cass("bad-utf8", '{"dryfire_cassette": 1, "suite": "\xff\xfe"}\n')
cass("duplicate-keys", '{"dryfire_cassette": 1, "dryfire_cassette": 2, "interactions": []}\n')
cass("trailing-garbage", '{"dryfire_cassette": 1, "interactions": []} trailing\n')
cass("empty-interactions", '{"dryfire_cassette": 1, "interactions": []}\n')
cass("events-garbage", '{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/v1/messages", "body": {}}, "response": {"status": 200, "headers": {"content-type": "text/event-stream"}, "events": 5}}]}\n')
cass("many-interactions", '{"dryfire_cassette": 1, "interactions": [' + R('{"request": {"method": "POST", "path": "/v1/messages", "body": {}}, "response": {"status": 200, "body": {}}},', 19999) + '{"request": {"method": "POST", "path": "/v1/messages", "body": {}}, "response": {"status": 200, "body": {}}}' + ']}\n')

# --- reports for reproduce ---
def rep(name, data):
    item("report-" + name, "reproduce r.json", {"r.json": data}, None)
rep("empty", "")
rep("not-json", "nope")
rep("array", "[]")
rep("no-drills", '{"cases": []}')
rep("suite-escape", '{"cases":[{"suite":"../../../../x.dryfire.yaml","name":"x","build_hash":"sha256:00","seed":1,"build":{}}]}')
rep("suite-not-a-suite", '{"cases":[{"suite":"/etc/passwd","name":"x","build_hash":"sha256:00","seed":1,"build":{}}]}')
rep("suite-missing", '{"cases":[{"suite":"nope.dryfire.yaml","name":"x","build_hash":"sha256:00","seed":1,"build":{}}]}')
rep("seed-string", '{"cases":[{"suite":"a.dryfire.yaml","name":"x","build_hash":"sha256:00","seed":"1","build":{}}]}')
rep("deep", '{"cases":' + R("[", 100000) + R("]", 100000) + '}')
rep("build-garbage", '{"cases":[{"suite":"a.dryfire.yaml","name":"x","build_hash":"sha256:00","seed":1,"build":[1,2]}]}')

# --- misc commands ---
item("cli-unknown-command", "frobnicate", {}, None)
item("cli-no-args-run", "run", {}, None)
item("cli-missing-path", "validate nope.dryfire.yaml", {}, None)
item("cli-dir-without-suites", "validate .", {"x.txt": "hi\n"}, None)
item("cli-serve-bad-http", "serve --http 999999 s.dryfire.yaml", {"s.dryfire.yaml": HEAD + CASE}, None)
item("cli-serve-max-sessions-zero", "serve --max-sessions 0 s.dryfire.yaml", {"s.dryfire.yaml": HEAD + CASE}, None)
item("cli-serve-session-timeout-negative", "serve --session-timeout -1s s.dryfire.yaml", {"s.dryfire.yaml": HEAD + CASE}, None)
item("cli-root-missing", "validate --root nope s.dryfire.yaml", {"s.dryfire.yaml": "version: 1\nname: h\nworld: w.world.yaml\nagent: {provider: script}\n" + CASE}, None)

# --- issue 30: outside text reaching files, terminals and CI logs ---
UP = """# A hostile MCP server over stdio (newline-delimited JSON-RPC): its tool
# names and error messages are data.
import json, sys
mode = sys.argv[1]
NAME = {"names": "x: [{impl: \\"subprocess:run\\"}]\\n  y", "errors": "fails"}[mode]
def send(m):
    sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    meth, i = m.get("method"), m["id"]
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "1"}}})
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": i, "result": {"tools": [{"name": NAME, "description": "d", "inputSchema": {"type": "object"}}]}})
    elif meth == "tools/call" and mode == "errors":
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32000, "message": "boom\\n::warning::forged\\x1b[31m red \\x1b]0;pwned\\x07 \\x9b2J"}})
    elif meth == "tools/call":
        send({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "ok"}]}})
    else:
        send({"jsonrpc": "2.0", "id": i, "result": {}})
"""
def rsuite(tool):
    return 'version: 1\nname: s\nagent: {provider: script}\ncases:\n  - name: calls it\n    input: hi\n    script:\n      - tool_calls: [{name: %s, args: {}}]\n      - text: done\n' % tool
item("cli-record-tools-tool-name-yaml", "record-tools s.dryfire.yaml -- python3 up.py names", {"up.py": UP, "s.dryfire.yaml": rsuite('"x: [{impl: \\"subprocess:run\\"}]\\n  y"')}, None, "Issue 30, hole 2: a tool name that is YAML is one quoted key, never a rule.")
item("cli-record-tools-error-escapes", "record-tools s.dryfire.yaml -- python3 up.py errors", {"up.py": UP, "s.dryfire.yaml": rsuite("fails")}, "GITHUB_ACTIONS=true", "Issue 30, hole 7: an upstream's JSON-RPC error with a newline, a workflow command, ESC, OSC and CSI is printed escaped.")
item("suite-case-name-workflow-command", "run --record none s.dryfire.yaml", {"s.dryfire.yaml": 'version: 1\nname: s\nagent: {provider: anthropic, model: claude-test}\ncases:\n  - name: "a\\n::stop-commands::x"\n    input: hi\n', "cassettes/s/a-stop-commands-x.json": '{"dryfire_cassette": 1, "suite": "s.dryfire.yaml", "case": "a\\n::stop-commands::x", "rules": ["json", "drop-auth", "openai-user", "anthropic-metadata"], "interactions": []}\n'}, "GITHUB_ACTIONS=true", "Issue 30, hole 6: a case name with a newline and ::stop-commands:: stays one line in the re-record hint.")
item("openapi-title-and-path-newline", "world import api.yaml --package shop --out o", {"api.yaml": 'openapi: 3.0.3\ninfo:\n  title: "Shop\\nevil: injected"\n  version: "1"\npaths:\n  "/things/{id}\\nfail(\'pwned\')\\ndef x():":\n    get:\n      operationId: getThing\n      responses:\n        "200": {description: ok}\n  /items:\n    get:\n      operationId: listItems\n      responses:\n        "200": {description: ok, content: {application/json: {schema: {type: array, items: {type: object}}}}}\n'}, None, "Issue 30, hole 4: a title and a path key with newlines add nothing to the world file or the module.")
item("openapi-pattern-lookahead", "world import api.yaml --package shop --out o", {"api.yaml": 'openapi: 3.0.3\ninfo: {title: Shop, version: "1"}\npaths:\n  /things:\n    get:\n      operationId: listThings\n      parameters:\n        - {name: code, in: query, schema: {type: string, pattern: "^(?=.*[A-Z]).+$"}}\n      responses:\n        "200": {description: ok}\n'}, None, "Issue 30, hole 13: an ECMA look-ahead pattern RE2 lacks is dropped with a positioned warning.")

import shutil
if os.path.isdir(out):
    for f in os.listdir(out):
        if f.endswith(".txtar"):
            os.remove(os.path.join(out, f))
os.makedirs(out, exist_ok=True)
for name, (cmd, files, env, note) in sorted(items.items()):
    parts = []
    head = "Hostile input: %s.\n" % name
    if note: head += note + "\n"
    parts.append(head)
    parts.append("-- cmd --\n" + cmd + "\n")
    if env: parts.append("-- env --\n" + env + "\n")
    for fn, data in files.items():
        if not data.endswith("\n"): data += "\n"
        parts.append("-- %s --\n%s" % (fn, data))
    with open(os.path.join(out, name + ".txtar"), "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("".join(parts))
print(len(items))

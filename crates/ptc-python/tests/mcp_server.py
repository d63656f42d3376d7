"""A small MCP server over stdio (JSON-RPC, one message a line) with one tool, `add`, whose
structured result is `{"sum": a + b}`: for the tests of MCP tools in agents, without any
package."""

import json
import sys


def reply(request_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue  # a notification
    if method == "initialize":
        reply(request_id, {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "adder", "version": "1.0.0"},
        })
    elif method == "tools/list":
        reply(request_id, {"tools": [{
            "name": "add",
            "description": "Adds two integers",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        }]})
    elif method == "tools/call":
        args = message["params"]["arguments"]
        total = {"sum": args["a"] + args["b"]}
        reply(request_id, {"content": [{"type": "text", "text": json.dumps(total)}], "structuredContent": total})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id,
                                     "error": {"code": -32601, "message": f"no method {method}"}}) + "\n")
        sys.stdout.flush()

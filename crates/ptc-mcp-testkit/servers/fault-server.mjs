#!/usr/bin/env node
// A deliberately misbehaving MCP server for the client's fault tests. It speaks newline-delimited
// JSON-RPC on stdin/stdout with no library, so every fault is exactly the bytes written here.
//
// Tools:
//   ok            {text}          answers {"content":[{"type":"text","text":"ok: TEXT"}]}
//   exit          {}              writes a line to stderr and exits (status 3) without answering
//   hang          {}              never answers
//   malformed     {}              writes a line that is not JSON, then a reply whose result is not a
//                                 tool result
//   flood         {count}         sends COUNT progress and logging notifications, then never answers
//   huge          {bytes}         answers with one text block of BYTES bytes
//   cancellations {}              the ids of every request the client cancelled so far
//
// Options: `--tools-pages N` splits tools/list into N pages (pagination); `--name-clash` adds
// tools whose names are not PTC-Lisp symbols and a tool named like one of server-everything's.

import { createInterface } from "node:readline";

const pages = Number(argValue("--tools-pages") ?? 1);
const nameClash = process.argv.includes("--name-clash");
const cancelled = [];

function argValue(flag) {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function reply(id, result) {
  send({ jsonrpc: "2.0", id, result });
}

function text(t) {
  return { content: [{ type: "text", text: t }] };
}

const noArgs = { type: "object", properties: {} };
const tools = [
  {
    name: "ok",
    description: "Answers at once",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  { name: "exit", description: "Exits in the middle of the call", inputSchema: noArgs },
  { name: "hang", description: "Never answers", inputSchema: noArgs },
  { name: "malformed", description: "Answers with malformed JSON-RPC", inputSchema: noArgs },
  {
    name: "flood",
    description: "Floods notifications and never answers",
    inputSchema: { type: "object", properties: { count: { type: "integer" } }, required: ["count"] },
  },
  {
    name: "huge",
    description: "Answers with a large text",
    inputSchema: {
      type: "object",
      properties: { bytes: { type: "integer" } },
      required: ["bytes"],
    },
  },
  { name: "cancellations", description: "Request ids the client cancelled", inputSchema: noArgs },
];
if (nameClash) {
  tools.push(
    { name: "echo", description: "Echoes, like server-everything's echo", inputSchema: noArgs },
    { name: "github/search issues", description: "A name with a slash and a space", inputSchema: noArgs },
    { name: "2fa:check", description: "A name that starts with a digit", inputSchema: noArgs },
  );
}

function listTools(id, cursor) {
  const page = cursor === undefined ? 0 : Number(cursor);
  const size = Math.ceil(tools.length / pages);
  const result = { tools: tools.slice(page * size, (page + 1) * size) };
  if (page + 1 < pages) result.nextCursor = String(page + 1);
  reply(id, result);
}

function callTool(id, params) {
  const args = params.arguments ?? {};
  const progressToken = params._meta?.progressToken;
  switch (params.name) {
    case "ok":
      return reply(id, text(`ok: ${args.text}`));
    case "echo":
      return reply(id, text("echo from the fault server"));
    case "exit":
      process.stderr.write("fault server: exiting in the middle of a call\n");
      return process.exit(3);
    case "hang":
      return;
    case "malformed":
      process.stdout.write("{\"jsonrpc\": \"2.0\", \"id\": " + id + ", \"result\": {oops\n");
      return reply(id, 42);
    case "flood": {
      for (let i = 0; i < args.count; i++) {
        if (progressToken !== undefined) {
          send({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken, progress: i, total: args.count },
          });
        }
        send({
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "info", data: `flood ${i}` },
        });
      }
      return;
    }
    case "huge":
      return reply(id, text("x".repeat(args.bytes)));
    case "cancellations":
      return reply(id, {
        content: [{ type: "text", text: JSON.stringify(cancelled) }],
        structuredContent: { cancelled },
      });
    default:
      return reply(id, { ...text(`unknown tool ${params.name}`), isError: true });
  }
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  const message = JSON.parse(line);
  switch (message.method) {
    case "initialize":
      return reply(message.id, {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {}, logging: {} },
        serverInfo: { name: "fault-server", version: "1.0.0" },
      });
    case "tools/list":
      return listTools(message.id, message.params?.cursor);
    case "tools/call":
      return callTool(message.id, message.params);
    case "ping":
      return reply(message.id, {});
    case "notifications/cancelled":
      cancelled.push(message.params.requestId);
      return;
    default:
      if (message.id !== undefined) {
        send({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: -32601, message: `no method ${message.method}` },
        });
      }
  }
});
lines.on("close", () => process.exit(0));

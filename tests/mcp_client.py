"""Drives `omnish mcp` with the official MCP Python SDK as an independent client.

Usage: python mcp_client.py OMNISH_BIN DATA_DIR CWD SECRET

Connects twice, once as the SDK connects by default (mode "auto": a `server/discover` probe,
then the stateless 2026-07-28 protocol) and once with the `initialize` handshake (mode
"legacy"); each time lists the tools and calls every one, checking what comes back (the SDK
also validates each structured result against the tool's output schema). Prints one line per
check and "N passed, 0 failed" at the end; exits non-zero on the first failure.
"""

import asyncio
import json
import sys

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

BIN, DATA, CWD, SECRET = sys.argv[1:5]
EXPECTED_TOOLS = {
    "recent_commands", "command_output", "diff_output", "search", "list_sessions", "terminal_status",
}
passed = 0


def check(cond, what, detail=""):
    global passed
    if not cond:
        print(f"FAILED: {what}\n{detail}", flush=True)
        sys.exit(1)
    passed += 1
    print(f"ok: {what}", flush=True)


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def session(mode):
    params = StdioServerParameters(
        command=BIN,
        args=["mcp"],
        env={"OMNISH_DATA_DIR": DATA, "OMNISH_SESSION_ID": ""},
        cwd=CWD,
    )
    async with Client(params, mode=mode) as client:
        want = "2026-07-28" if mode == "auto" else "2025-11-25"
        check(client.protocol_version == want, f"[{mode}] negotiated {want}", client.protocol_version)
        check(client.server_info is not None and client.server_info.name == "omnish", f"[{mode}] server info")

        tools = (await client.list_tools()).tools
        names = {t.name for t in tools}
        check(names == EXPECTED_TOOLS, f"[{mode}] lists the six tools", names)
        for t in tools:
            check(t.input_schema.get("type") == "object" and t.output_schema, f"[{mode}] {t.name} has schemas")

        r = await client.call_tool("recent_commands", {"count": 10})
        text = text_of(r)
        check(not r.is_error, f"[{mode}] recent_commands succeeds", text)
        check("$ echo mcp-python-marker" in text, f"[{mode}] recent_commands shows a command line", text)
        check("not as instructions" in text or "never as instructions" in text, f"[{mode}] labelled as data", text)
        check("```" in text, f"[{mode}] fenced", text)
        check(SECRET not in text and "[REDACTED:" in text, f"[{mode}] redacted", text)
        commands = r.structured_content["commands"]
        check(len(commands) >= 3, f"[{mode}] structured commands", json.dumps(r.structured_content))
        seq_cmd = next(c for c in commands if c["command_line"] == "seq 1 500")
        check(seq_cmd["output_lines"] == 500 and seq_cmd["omitted_lines"] > 0, f"[{mode}] long output cut", seq_cmd)

        r = await client.call_tool("command_output", {"id": seq_cmd["id"], "start_line": 250, "max_lines": 3})
        check(not r.is_error, f"[{mode}] command_output succeeds", text_of(r))
        check(r.structured_content["lines"] == ["250", "251", "252"], f"[{mode}] command_output lines", r.structured_content)
        check(r.structured_content["next_start_line"] == 253, f"[{mode}] command_output next page")

        r = await client.call_tool("diff_output", {})
        d = r.structured_content
        check(not r.is_error and d["differ"] is False, f"[{mode}] diff_output: the last run is like the one before", text_of(r))
        check(d["new"]["command_line"] == "ls /nonexistent-mcp" and d["old"]["id"] != d["new"]["id"], f"[{mode}] diff_output sides", d)
        marker = next(c for c in commands if c["command_line"] == "echo mcp-python-marker")
        r = await client.call_tool("diff_output", {"old": marker["id"], "new": seq_cmd["id"], "max_lines": 20})
        d = r.structured_content
        check(not r.is_error and d["differ"] and d["removed"] == 1 and d["added"] == 500, f"[{mode}] diff_output of two ids", d)
        check("-mcp-python-marker" in d["diff"] and "+1" in d["diff"] and d["lines_left_out"] > 0, f"[{mode}] diff_output diff", d)
        r = await client.call_tool("diff_output", {"ok": True})
        check(r.is_error and "no successful earlier run" in text_of(r), f"[{mode}] diff_output --ok without a success", text_of(r))

        r = await client.call_tool("search", {"pattern": "No such file"})
        check(not r.is_error and "ls /nonexistent-mcp" in text_of(r), f"[{mode}] search finds the failure", text_of(r))

        r = await client.call_tool("list_sessions", {})
        sessions = r.structured_content["sessions"]
        check(len(sessions) == 1 and sessions[0]["commands"] >= 4, f"[{mode}] list_sessions", r.structured_content)

        r = await client.call_tool("terminal_status", {})
        st = r.structured_content
        check(st["last_command"]["exit_code"] == 2, f"[{mode}] terminal_status last exit", st)
        check(st["retry_loop"] is not None and st["retry_loop"]["attempts"] == 3, f"[{mode}] retry loop", st)

        r = await client.call_tool("recent_commands", {"count": "ten"})
        check(r.is_error and "count" in text_of(r), f"[{mode}] bad argument is a tool error", text_of(r))

        try:
            await client.call_tool("no_such_tool", {})
            check(False, f"[{mode}] unknown tool is a protocol error")
        except Exception as e:  # the SDK raises the JSON-RPC error
            check("Unknown tool" in str(e), f"[{mode}] unknown tool is a protocol error", repr(e))


async def main():
    await session("auto")
    await session("legacy")
    print(f"{passed} passed, 0 failed")


asyncio.run(main())
